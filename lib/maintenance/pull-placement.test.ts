import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApiException, type V1Job, type V1Pod } from '@kubernetes/client-node';
import type { FileAccess, FileGates } from '../files/gates.ts';
import type { Target } from '../job-spec/types.ts';
import type { LogOpening } from '../kube/job-pods.ts';
import { opState } from '../ops/state.ts';
import { opView } from '../ops/view.ts';
import { formatProgressLine, formatResultLine, type Result } from '../protocol/result.ts';
import { matches } from '../testing/fake-servers.ts';
import { MaintenanceBusyError, NotStoppedError } from './errors.ts';
import { PullPlacer, placementOpId } from './pull-placement.ts';

const PLACED = 'felis.lolicon.best/pull-placed';
const DONE = [{ type: 'Complete', status: 'True' }];
const FAILED = [{ type: 'Failed', status: 'True', reason: 'DeadlineExceeded' }];

/** Jobs (with resourceVersion preconditions on patches, as the API server has), their Pods and logs. */
class FakeCluster {
  jobs: V1Job[] = [];
  pods: V1Pod[] = [];
  logs = new Map<string, string>();
  rv = 1;
  patches: string[] = [];
  /** Runs before a patch applies: a test writes the Job in between, as another pass would. */
  beforePatch?: (name: string) => void;

  /** A pull Job of `server` with op `op`, ended with `conditions`, its Pod having printed `log`. */
  pull(op: string, log: string | undefined, conditions: object[] = DONE, server = 'survival'): V1Job {
    const labels = {
      'app.kubernetes.io/managed-by': 'felis-files',
      'felis.lolicon.best/server': server,
      'felis.lolicon.best/files-op': op,
      'felis.lolicon.best/files-mode': 'read',
      'felis.lolicon.best/files-pull': 'true',
      'felis.lolicon.best/files-async': 'true',
    };
    const job: V1Job = {
      metadata: { name: `files-${server}-${op}`, uid: `uid-${op}`, resourceVersion: String(this.rv++), labels, annotations: { 'felis.lolicon.best/files-path': 'plugins' } },
      status: { conditions: conditions as never },
    };
    this.jobs.push(job);
    if (log !== undefined) {
      this.pods.push({ metadata: { name: `pod-${op}`, labels, creationTimestamp: new Date() }, status: { phase: 'Succeeded' } });
      this.logs.set(`pod-${op}`, log);
    }
    return job;
  }
  api = {
    listJobs: async (_ns: string, sel: string) => structuredClone(this.jobs.filter((j) => matches(sel, j.metadata?.labels))),
    patchJob: async (_ns: string, name: string, patch: { metadata: { resourceVersion?: string; annotations?: Record<string, string> } }) => {
      this.beforePatch?.(name);
      const j = this.jobs.find((x) => x.metadata?.name === name)!;
      if (patch.metadata.resourceVersion && patch.metadata.resourceVersion !== j.metadata!.resourceVersion) {
        throw new ApiException(409, 'Conflict', JSON.stringify({ reason: 'Conflict', message: 'the object has been modified' }), {});
      }
      j.metadata!.annotations = { ...j.metadata!.annotations, ...patch.metadata.annotations };
      j.metadata!.resourceVersion = String(this.rv++);
      this.patches.push(name);
    },
  };
  logsApi = {
    listPods: async (_ns: string, sel: string) => structuredClone(this.pods.filter((p) => matches(sel, p.metadata?.labels))),
    openLog: async (_ns: string, pod: string): Promise<LogOpening> => {
      const l = this.logs.get(pod);
      return l === undefined
        ? { kind: 'gone' }
        : {
            kind: 'stream',
            body: (async function* () {
              yield Buffer.from(l);
            })(),
            close() {},
          };
    },
  };
  record(op: string, server = 'survival'): Result | undefined {
    const text = this.jobs.find((j) => j.metadata?.name === `files-${server}-${op}`)?.metadata?.annotations?.[PLACED];
    return text === undefined ? undefined : JSON.parse(text);
  }
  view(op: string, server = 'survival') {
    const job = this.jobs.find((j) => j.metadata?.name === `files-${server}-${op}`)!;
    return opView(
      opState(
        job,
        this.pods.find((p) => p.metadata?.name === `pod-${op}`),
        this.logs.get(`pod-${op}`) ?? '',
      ),
    );
  }
}

const staged = (to: string, bytes = 42) => formatProgressLine({ done: bytes, total: bytes }) + formatResultLine({ staged: true, bytes, to });

/** The gates, one world line per server (changes run one at a time), and what enter or run refuse with. */
class FakeGates implements FileGates {
  entered: Array<{ server: string; access: FileAccess }> = [];
  refuseEnter?: Error;
  refuseRun?: Error;
  #line = new Map<string, Promise<unknown>>();
  async enter(server: string, access: FileAccess): Promise<Target> {
    this.entered.push({ server, access });
    if (this.refuseEnter) throw this.refuseEnter;
    return { server, world: { claim: `world-${server}` } };
  }
  run<T>(server: string, _access: FileAccess, fn: () => Promise<T>): Promise<T> {
    if (this.refuseRun) return Promise.reject(this.refuseRun);
    const prev = this.#line.get(server) ?? Promise.resolve();
    const mine = prev.then(fn, fn);
    this.#line.set(
      server,
      mine.catch(() => {}),
    );
    return mine;
  }
}

/**
 * The placement Job, as FilesEditor.placePull makes it: one Job per op id, made at most once; a
 * second call for the same op id follows the one made and answers its result.
 */
function fakePlace(answer: (p: { path: string; to: string }) => Result = (p) => ({ files: 1, bytes: 42, to: p.path ? `${p.path}/${p.to}` : p.to })) {
  const made = new Map<string, Result>();
  const calls: Array<{ path: string; to: string; pullOp: string; opId: string }> = [];
  const place = async (_t: Target, p: { path: string; to: string; pullOp: string; opId: string }) => {
    calls.push(p);
    await new Promise((r) => setTimeout(r, 5));
    if (!made.has(p.opId)) made.set(p.opId, answer(p));
    return made.get(p.opId)!;
  };
  return { place, calls, made };
}

const setup = (answer?: (p: { path: string; to: string }) => Result) => {
  const c = new FakeCluster();
  const gates = new FakeGates();
  const p = fakePlace(answer);
  const placer = new PullPlacer({ api: c.api, logs: c.logsApi, namespace: 'minecraft', gates, place: p.place });
  return { c, gates, p, placer };
};

const A = 'aaaaaaaaaaaaaaaa';
const B = 'bbbbbbbbbbbbbbbb';

test('a pull that ended staged is placed through the gates and the line, by the op id derived from its own, and the outcome recorded on its Job; the listing then shows it', async () => {
  const { c, gates, p, placer } = setup();
  c.pull(A, staged('plugins/mod.jar'));
  assert.equal(c.view(A).state, 'running', 'downloaded, not yet placed: still running');
  assert.deepEqual(await placer.placeOnce(), [{ job: `files-survival-${A}`, op: A, server: 'survival', state: 'placed', to: 'plugins/mod.jar' }]);
  assert.deepEqual(gates.entered, [{ server: 'survival', access: { op: 'pull-place', path: 'plugins' } }]);
  assert.deepEqual(p.calls, [{ path: 'plugins', to: 'mod.jar', pullOp: A, opId: placementOpId(A) }]);
  assert.deepEqual(c.record(A), { files: 1, bytes: 42, to: 'plugins/mod.jar' });
  const v = c.view(A);
  assert.deepEqual([v.state, v.files, v.bytes, v.to], ['succeeded', 1, 42, 'plugins/mod.jar']);
  assert.match(placementOpId(A), /^[0-9a-f]{16}$/);
  assert.notEqual(placementOpId(A), placementOpId(B));
  assert.notEqual(placementOpId(A), A);
});

test('a redelivered change event or the next tick does nothing twice: a recorded pull is not looked at again', async () => {
  const { c, p, placer } = setup();
  c.pull(A, staged('plugins/mod.jar'));
  await placer.placeOnce();
  const patches = c.patches.length;
  assert.deepEqual(await placer.placeOnce(), []);
  assert.deepEqual(await placer.placeOnce(), []);
  assert.equal(p.calls.length, 1);
  assert.equal(c.patches.length, patches);
});

test('an event and a tick at once in one instance: the second pass joins the placement under way', async () => {
  const { c, p, placer } = setup();
  c.pull(A, staged('plugins/mod.jar'));
  const [one, two] = await Promise.all([placer.placeOnce(), placer.placeOnce()]);
  assert.deepEqual(one, two);
  assert.equal(p.calls.length, 1);
  assert.equal(c.patches.length, 1);
});

test('two instances at once: one placement Job (its op id is derived), and the record first written stands', async () => {
  const c = new FakeCluster();
  const gates = new FakeGates();
  const shared = fakePlace();
  const one = new PullPlacer({ api: c.api, logs: c.logsApi, namespace: 'minecraft', gates, place: shared.place });
  const two = new PullPlacer({ api: c.api, logs: c.logsApi, namespace: 'minecraft', gates, place: shared.place });
  c.pull(A, staged('plugins/mod.jar'));
  const [r1, r2] = await Promise.all([one.placeOnce(), two.placeOnce()]);
  assert.equal(shared.made.size, 1, 'one placement Job');
  assert.deepEqual(
    r1.map((x) => x.state),
    ['placed'],
  );
  assert.deepEqual(
    r2.map((x) => x.state),
    ['placed'],
  );
  assert.equal(c.patches.length, 1, 'the second pass read the record and left it');

  // A pass that decided on a stale read, and whose own outcome differs: the record stays the first.
  c.pull(B, staged('plugins/b.jar'));
  const other = new PullPlacer({ api: c.api, logs: c.logsApi, namespace: 'minecraft', gates, place: async () => ({ code: 'exists', error: 'plugins/b.jar already exists' }) });
  c.beforePatch = (name) => {
    c.beforePatch = undefined;
    const j = c.jobs.find((x) => x.metadata?.name === name)!;
    j.metadata!.annotations = { ...j.metadata!.annotations, [PLACED]: '{"files":1,"bytes":42,"to":"plugins/b.jar"}' };
    j.metadata!.resourceVersion = String(c.rv++);
  };
  assert.deepEqual(
    (await other.placeOnce()).map((x) => x.state),
    ['placed'],
  );
  assert.deepEqual(c.record(B), { files: 1, bytes: 42, to: 'plugins/b.jar' });
});

test('only a pull that ended staged is placed: a running one, a failed one, one without a result are left to the listing', async () => {
  const { c, p, placer } = setup();
  c.pull('1111111111111111', undefined, []);
  c.pull('2222222222222222', formatResultLine({ code: 'pull_failed', error: 'HTTP 404' }));
  c.pull('3333333333333333', undefined, FAILED);
  c.pull('4444444444444444', formatProgressLine({ done: 3, total: 9 }), FAILED);
  assert.deepEqual(await placer.placeOnce(), []);
  assert.deepEqual(p.calls, []);
  assert.deepEqual(c.patches, []);
  // A tick later finds one that ended staged meanwhile (its change event lost).
  c.pull(A, staged('mod.jar'));
  assert.deepEqual(
    (await placer.placeOnce()).map((x) => [x.op, x.state, x.to]),
    [[A, 'placed', 'mod.jar']],
  );
  assert.deepEqual(p.calls[0], { path: '', to: 'mod.jar', pullOp: A, opId: placementOpId(A) });
});

test('the server started meanwhile: recorded failed not_stopped, nothing placed; a held world leaves it pending for the next pass', async () => {
  const { c, gates, p, placer } = setup();
  c.pull(A, staged('plugins/mod.jar'));
  gates.refuseEnter = new NotStoppedError();
  assert.deepEqual(
    (await placer.placeOnce()).map((x) => [x.state, x.code]),
    [['failed', 'not_stopped']],
  );
  assert.equal(c.record(A)!.code, 'not_stopped');
  assert.match(c.record(A)!.error!, /started before the pulled file could be placed/);
  const v = c.view(A);
  assert.deepEqual([v.state, v.error?.code], ['failed', 'not_stopped']);
  assert.deepEqual(p.calls, []);

  gates.refuseEnter = undefined;
  gates.refuseRun = new MaintenanceBusyError('backup');
  c.pull(B, staged('plugins/b.jar'));
  assert.deepEqual(
    (await placer.placeOnce()).map((x) => [x.op, x.state]),
    [[B, 'pending']],
  );
  assert.equal(c.record(B), undefined);
  assert.equal(c.view(B).state, 'running');
  gates.refuseRun = undefined;
  assert.deepEqual(
    (await placer.placeOnce()).map((x) => [x.op, x.state]),
    [[B, 'placed']],
  );
});

test("a placement refused by the Job (the name taken meanwhile) is the pull's failure, as the listing shows it", async () => {
  const { c, placer } = setup((p) => ({ code: 'exists', error: `${p.path}/${p.to} already exists` }));
  c.pull(A, staged('plugins/mod.jar'));
  assert.deepEqual(
    (await placer.placeOnce()).map((x) => [x.state, x.code]),
    [['failed', 'exists']],
  );
  const v = c.view(A);
  assert.deepEqual([v.state, v.error], ['failed', { code: 'file_exists', message: 'plugins/mod.jar already exists' }]);
});

test('no worker image: nothing is placed, nothing listed', async () => {
  const c = new FakeCluster();
  c.pull(A, staged('plugins/mod.jar'));
  const placer = new PullPlacer({ api: c.api, logs: c.logsApi, namespace: 'minecraft', gates: new FakeGates(), place: undefined });
  assert.deepEqual(await placer.placeOnce(), []);
});
