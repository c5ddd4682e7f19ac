import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import { EventConflictError } from '../events/errors.ts';
import { mapDomainError } from '../http/error-map.ts';
import { JobSpecError } from '../job-spec/render.ts';
import type { LogOpening, LogOptions } from '../kube/job-pods.ts';
import { DEFAULT_OPS } from '../protocol/ops-page.ts';
import { formatRecoveredLine } from '../protocol/recovered.ts';
import { formatProgressLine, formatResultLine } from '../protocol/result.ts';
import { RunnerError } from '../runner/errors.ts';
import { matches } from '../testing/fake-servers.ts';
import { type BackgroundApi, BackgroundOps, MAX_PULLS_PER_SERVER, TooManyPullsError } from './background.ts';
import { opsSelector } from './list.ts';

const settings = {
  namespace: 'minecraft',
  image: 'felis:dev',
  command: ['/usr/local/bin/felis', 'files'],
  serviceAccount: 'felis-restore',
  worldsRoot: '/data',
  deadlineSeconds: 120,
  ttlSeconds: 120,
};
const target = { server: 'survival', world: { claim: 'world-survival-0', node: 'node-a' } };

/** Jobs, Pods and logs in memory; list calls apply the label selector; every call is recorded. */
class FakeApi implements BackgroundApi {
  jobs: V1Job[] = [];
  pods: V1Pod[] = [];
  logs = new Map<string, string | Error>();
  calls: string[] = [];
  logOpts: Array<{ pod: string; container: string; opts: LogOptions }> = [];
  failList: 'jobs' | 'pods' | undefined;
  failCreate = false;

  async createJob(ns: string, job: V1Job) {
    this.calls.push(`create ${ns}/${job.metadata?.name}`);
    if (this.failCreate) throw new Error('forbidden');
    const created = { ...structuredClone(job), metadata: { ...structuredClone(job.metadata), creationTimestamp: new Date('2026-12-01T07:00:00Z') } };
    this.jobs.push(created);
    return created;
  }
  async listJobs(_ns: string, sel: string) {
    this.calls.push(`list jobs ${sel}`);
    if (this.failList === 'jobs') throw new Error('jobs list refused');
    return this.jobs.filter((j) => matches(sel, j.metadata?.labels));
  }
  async listPods(_ns: string, sel: string) {
    this.calls.push(`list pods ${sel}`);
    if (this.failList === 'pods') throw new Error('pods list refused');
    return this.pods.filter((p) => matches(sel, p.metadata?.labels));
  }
  async openLog(_ns: string, pod: string, container: string, opts: LogOptions): Promise<LogOpening> {
    this.calls.push(`log ${pod}`);
    this.logOpts.push({ pod, container, opts });
    const l = this.logs.get(pod);
    if (l instanceof Error) throw l;
    if (l === undefined) return { kind: 'gone' };
    return {
      kind: 'stream',
      body: (async function* () {
        yield Buffer.from(l);
      })(),
      close() {},
    };
  }
}

const labels = (server: string, op: string, async = true) => ({
  'app.kubernetes.io/managed-by': 'felis-files',
  'felis.lolicon.best/server': server,
  'felis.lolicon.best/files-op': op,
  'felis.lolicon.best/files-mode': 'unzip',
  ...(async ? { 'felis.lolicon.best/files-async': 'true' } : {}),
});
const asyncJob = (op: string, minute: number, server = 'survival', isAsync = true): V1Job => ({
  metadata: {
    name: `files-${server}-${op}`,
    labels: labels(server, op, isAsync),
    annotations: { 'felis.lolicon.best/files-path': `${op}.zip` },
    creationTimestamp: new Date(Date.UTC(2026, 11, 1, 5, minute)),
  },
  status: {},
});
const podOf = (op: string, name: string, phase: string, second: number, server = 'survival'): V1Pod => ({
  metadata: { name, labels: labels(server, op), creationTimestamp: new Date(Date.UTC(2026, 11, 1, 6, 0, second)) },
  status: { phase },
});

test('the listing: newest 10 of this server’s async Jobs, newest Pod per op, logs only of started Pods', async () => {
  const api = new FakeApi();
  for (let i = 0; i < 12; i++) {
    const id = String(i).padStart(2, '0');
    api.jobs.push(asyncJob(id, 20 - i));
    api.pods.push(podOf(id, `pod-${id}`, 'Running', 0));
    api.logs.set(`pod-${id}`, formatProgressLine({ done: i, total: 12 }));
  }
  // The newest op: its older Pod failed, its newer Pod is Pending, so no log is read for it.
  api.jobs.push(asyncJob('new', 30));
  api.pods.push(podOf('new', 'pod-new-old', 'Failed', 0), podOf('new', 'pod-new', 'Pending', 5));
  api.logs.set('pod-new-old', formatProgressLine({ done: 99, total: 99 }));
  api.jobs.push(asyncJob('other', 40, 'creative'));
  api.jobs.push(asyncJob('sync', 50, 'survival', false));

  const { ops, next } = await new BackgroundOps(settings, api, () => 'x').list('survival');
  assert.deepEqual(
    ops.map((o) => o.id),
    ['new', '00', '01', '02', '03', '04', '05', '06', '07', '08'],
  );
  assert.equal(ops.length, DEFAULT_OPS);
  assert.equal(next, '08', 'more remain: the last id is the next page’s after');
  assert.deepEqual([ops[0]!.done, ops[0]!.total], [0, 0], 'the Pending Pod is the newest; the older Pod’s log is not read');
  assert.deepEqual([ops[3]!.done, ops[3]!.total], [2, 12]);
  assert.deepEqual(api.logOpts.map((l) => l.pod).sort(), ['pod-00', 'pod-01', 'pod-02', 'pod-03', 'pod-04', 'pod-05', 'pod-06', 'pod-07', 'pod-08']);
  for (const l of api.logOpts) {
    assert.equal(l.container, 'files');
    assert.equal(l.opts.tailLines, 20);
    assert.equal(l.opts.follow, false);
    assert.equal(l.opts.limitBytes, 256 << 10);
  }
  assert.deepEqual(
    api.calls.filter((c) => c.startsWith('list')),
    [`list jobs ${opsSelector('survival')}`, `list pods ${opsSelector('survival')}`],
  );
  assert.equal(opsSelector('survival'), 'app.kubernetes.io/managed-by=felis-files,felis.lolicon.best/server=survival,felis.lolicon.best/files-async=true');
});

test('a log that cannot be read is an empty log; a finished op keeps its result', async () => {
  const api = new FakeApi();
  api.jobs.push({ ...asyncJob('aa', 1), status: { conditions: [{ type: 'Complete', status: 'True', lastTransitionTime: new Date('2026-12-01T05:03:00Z') }] } });
  api.jobs.push(asyncJob('bb', 2));
  api.pods.push(podOf('aa', 'pod-aa', 'Succeeded', 0), podOf('bb', 'pod-bb', 'Running', 0));
  api.logs.set('pod-aa', `${formatProgressLine({ done: 9, total: 9 })}${formatResultLine({ files: 4, bytes: 9 })}`);
  api.logs.set('pod-bb', new Error('connection reset'));
  const { ops } = await new BackgroundOps(settings, api, () => 'x').list('survival');
  assert.deepEqual(ops, [
    { id: 'bb', op: 'unzip', path: 'bb.zip', state: 'running', started_at: '2026-12-01T05:02:00Z', done: 0, total: 0 },
    { id: 'aa', op: 'unzip', path: 'aa.zip', state: 'succeeded', started_at: '2026-12-01T05:01:00Z', finished_at: '2026-12-01T05:03:00Z', done: 9, total: 9, files: 4, bytes: 9 },
  ]);
});

test('a refused Job or Pod list fails the listing (never a partial or empty one)', async () => {
  for (const what of ['jobs', 'pods'] as const) {
    const api = new FakeApi();
    api.jobs.push(asyncJob('aa', 1));
    api.failList = what;
    await assert.rejects(new BackgroundOps(settings, api, () => 'x').list('survival'), (e: Error) => e instanceof RunnerError && e.message.includes(`${what} list refused`));
  }
  assert.deepEqual(await new BackgroundOps(settings, new FakeApi(), () => 'x').list('survival'), { ops: [] });
});

test('paging: limit and after walk every op once, newest first, ties by id; next only while more remain; an unknown after is 400', async () => {
  const api = new FakeApi();
  // Kubernetes times have whole seconds: four ops in one minute, listed by the API in no useful order.
  for (const [id, minute] of [
    ['0c', 3],
    ['0a', 3],
    ['0d', 1],
    ['0b', 3],
    ['0e', 2],
  ] as const) {
    api.jobs.push(asyncJob(id, minute));
    api.pods.push(podOf(id, `pod-${id}`, 'Running', 0));
  }
  const ops = new BackgroundOps(settings, api, () => 'x');
  const seen: string[][] = [];
  let after: string | undefined;
  for (;;) {
    const page = await ops.list('survival', { limit: 2, ...(after ? { after } : {}) });
    seen.push(page.ops.map((o) => o.id));
    if (page.next === undefined) break;
    assert.equal(page.next, page.ops.at(-1)!.id);
    after = page.next;
  }
  assert.deepEqual(seen, [['0a', '0b'], ['0c', '0e'], ['0d']]);
  // The last page ends exactly: no next, and a page after the last op is empty without reading Pods.
  assert.deepEqual(await ops.list('survival', { limit: 4, after: '0c' }), await ops.list('survival', { after: '0c' }));
  api.calls = [];
  assert.deepEqual(await ops.list('survival', { after: '0d' }), { ops: [] });
  assert.deepEqual(api.calls, [`list jobs ${opsSelector('survival')}`]);
  await assert.rejects(ops.list('survival', { after: '0f' }), (e: Error) => {
    const m = mapDomainError(e);
    return m?.status === 400 && m.code === 'bad_request' && /after.*0f/.test(e.message);
  });
  // A page reads the logs of its own ops only.
  api.logOpts = [];
  await ops.list('survival', { limit: 2, after: '0b' });
  assert.deepEqual(api.logOpts.map((l) => l.pod).sort(), ['pod-0c', 'pod-0e']);
});

test('one op by its id: its own Jobs and Pods only; another server’s op or an unknown id is 404 op_not_found', async () => {
  const api = new FakeApi();
  api.jobs.push(asyncJob('0a', 1), asyncJob('0b', 2), asyncJob('0c', 3, 'creative'));
  api.pods.push(podOf('0a', 'pod-0a', 'Running', 0), podOf('0b', 'pod-0b', 'Running', 0));
  api.logs.set('pod-0a', formatProgressLine({ done: 3, total: 7 }));
  const ops = new BackgroundOps(settings, api, () => 'x');
  assert.deepEqual(await ops.get('survival', '0a'), { id: '0a', op: 'unzip', path: '0a.zip', state: 'running', started_at: '2026-12-01T05:01:00Z', done: 3, total: 7 });
  assert.deepEqual(api.calls, [`list jobs ${opsSelector('survival')},felis.lolicon.best/files-op=0a`, `list pods ${opsSelector('survival')},felis.lolicon.best/files-op=0a`, 'log pod-0a']);
  for (const [server, id] of [
    ['survival', '0c'],
    ['survival', '0f'],
    ['creative', '0a'],
  ]) {
    api.calls = [];
    await assert.rejects(ops.get(server!, id!), (e: Error) => mapDomainError(e)?.status === 404 && mapDomainError(e)?.code === 'op_not_found' && e.message.includes(id!));
    assert.deepEqual(api.calls.length, 1, 'one Job list, nothing more');
  }
});

test('an upload session is one op whose id is its session id: told by its newest receiver, begun when its first was', async () => {
  const api = new FakeApi();
  const session = 'ab'.repeat(16);
  const receiver = (op: string, minute: number, conditions: NonNullable<V1Job['status']>['conditions'] = []): V1Job => {
    const j = asyncJob(op, minute);
    j.metadata!.labels = { ...j.metadata!.labels, 'felis.lolicon.best/files-mode': 'read', 'felis.lolicon.best/upload-session': session };
    j.metadata!.annotations = { 'felis.lolicon.best/files-path': 'big.bin' };
    j.status = { conditions };
    return j;
  };
  // The first receiver was lost (its Job failed); the second resumed the session and has 6 MB of 10.
  api.jobs.push(receiver('s000000000000001', 1, [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded', lastTransitionTime: new Date('2026-12-01T05:02:00Z') }]));
  api.jobs.push(receiver('s000000000000002', 4), asyncJob('0a', 3));
  api.pods.push(podOf('s000000000000001', 'pod-r1', 'Failed', 0), podOf('s000000000000002', 'pod-r2', 'Running', 5), podOf('0a', 'pod-0a', 'Running', 0));
  api.pods[0]!.metadata!.labels!['felis.lolicon.best/upload-session'] = session;
  api.pods[1]!.metadata!.labels!['felis.lolicon.best/upload-session'] = session;
  api.logs.set('pod-r1', formatProgressLine({ done: 2_000_000, total: 10_000_000 }));
  api.logs.set('pod-r2', formatProgressLine({ done: 6_000_000, total: 10_000_000 }));
  const ops = new BackgroundOps(settings, api, () => 'x');
  const view = { id: session, op: 'upload', path: 'big.bin', state: 'running', started_at: '2026-12-01T05:01:00Z', done: 6_000_000, total: 10_000_000 };
  const { ops: listed } = await ops.list('survival');
  assert.deepEqual(
    listed.map((o) => o.id),
    ['0a', session],
    'once, in the place of its begin',
  );
  assert.deepEqual(listed[1], view);
  api.calls = [];
  assert.deepEqual(await ops.get('survival', session), view);
  assert.equal(api.calls[0], `list jobs ${opsSelector('survival')},felis.lolicon.best/upload-session=${session}`);
  // A receiver's own op label is no op id of its own.
  await assert.rejects(ops.get('survival', 's000000000000002'), (e: Error) => mapDomainError(e)?.code === 'op_not_found');
});

test('an op that ended without a result, on a later page or asked for alone, learns what became of it from the newer op that recovered the world', async () => {
  const api = new FakeApi();
  const lost = '00000000000000aa';
  const by = '00000000000000bb';
  // The interrupted op: its Job failed, its Pod is gone; the next op (newer) recovered the world and said so.
  api.jobs.push({ ...asyncJob(lost, 1), status: { conditions: [{ type: 'Failed', status: 'True', reason: 'DeadlineExceeded', lastTransitionTime: new Date('2026-12-01T05:02:00Z') }] } });
  api.jobs.push(asyncJob(by, 2));
  api.pods.push(podOf(by, 'pod-bb', 'Running', 0));
  api.logs.set('pod-bb', formatRecoveredLine({ op: lost, kind: 'unzip', now: 'old' }));
  const ops = new BackgroundOps(settings, api, () => 'x');
  const page = await ops.list('survival', { limit: 1, after: by });
  assert.deepEqual([page.ops[0]!.id, page.ops[0]!.error?.code, page.ops[0]!.recovered?.by], [lost, 'interrupted', by]);
  const alone = await ops.get('survival', lost);
  assert.deepEqual([alone.error?.code, alone.recovered?.by], ['interrupted', by]);
  // A page whose ops all tell their own outcome reads no newer log.
  api.logOpts = [];
  await ops.list('survival', { limit: 1 });
  assert.deepEqual(
    api.logOpts.map((l) => l.pod),
    ['pod-bb'],
  );
});

test('start: exactly one create of the async Job (2 h deadline, 30 min TTL, one CPU) and its running view', async () => {
  const api = new FakeApi();
  const bg = new BackgroundOps(settings, api, () => '00000000000000ab');
  const view = await bg.start(target, { op: 'unzip', path: 'maps/a.zip', overwrite: true, to: 'maps/a' });
  assert.deepEqual(view, { id: '00000000000000ab', op: 'unzip', path: 'maps/a.zip', state: 'running', started_at: '2026-12-01T07:00:00Z', done: 0, total: 0 });
  assert.deepEqual(api.calls, ['create minecraft/files-survival-00000000000000ab']);
  const job = api.jobs[0]!;
  assert.equal(job.metadata!.labels!['felis.lolicon.best/files-async'], 'true');
  assert.deepEqual(job.metadata!.annotations, { 'felis.lolicon.best/files-path': 'maps/a.zip', 'felis.lolicon.best/files-change': 'felis-world' });
  assert.equal(job.spec!.activeDeadlineSeconds, 7200);
  assert.equal(job.spec!.ttlSecondsAfterFinished, 1800);
  const c = job.spec!.template.spec!.containers[0]!;
  assert.deepEqual(c.resources!.limits, { cpu: '1', memory: '256Mi' });
  assert.deepEqual(c.args, ['--op', 'unzip', '--path', 'maps/a.zip', '--worlds-root', '/data', '--overwrite', '--to', 'maps/a']);
  assert.deepEqual(job.spec!.template.spec!.nodeSelector, { 'felis.node-restriction.kubernetes.io/identity': 'node-a' });
});

test('start: a pull counts the pulls of its server still downloading first; at the most it is 429 too_many_pulls and nothing is made', async () => {
  const api = new FakeApi();
  let n = 0;
  const bg = new BackgroundOps(settings, api, () => `00000000000000${(++n).toString(16).padStart(2, '0')}`);
  const pull = { op: 'pull' as const, path: 'plugins', url: 'https://example.com/a.jar' };
  for (let i = 0; i < MAX_PULLS_PER_SERVER; i++) await bg.start(target, pull);
  assert.equal(api.calls.filter((c) => c.startsWith('create')).length, MAX_PULLS_PER_SERVER);
  assert.equal(api.calls[0], 'list jobs app.kubernetes.io/managed-by=felis-files,felis.lolicon.best/server=survival,felis.lolicon.best/files-pull=true');
  // Another server's pulls, and this server's other ops, do not count.
  await bg.start({ ...target, server: 'creative' }, pull);
  await bg.start(target, { op: 'zip', path: 'w' });
  const refused = await bg.start(target, pull).catch((e: unknown) => e);
  assert.ok(refused instanceof TooManyPullsError, String(refused));
  const mapped = mapDomainError(refused)!;
  assert.deepEqual([mapped.status, mapped.code], [429, 'too_many_pulls']);
  assert.equal(api.jobs.length, MAX_PULLS_PER_SERVER + 2);
  // One ends (its download staged or failed): room for the next.
  api.jobs[0]!.status = { conditions: [{ type: 'Complete', status: 'True' }] };
  await bg.start(target, pull);
  assert.equal(api.jobs.length, MAX_PULLS_PER_SERVER + 3);
});

test('start: invalid settings fail before any call; a refused create fails', async () => {
  const api = new FakeApi();
  await assert.rejects(new BackgroundOps({ ...settings, image: '' }, api, () => 'x').start(target, { op: 'zip', path: 'w' }), JobSpecError);
  await assert.rejects(new BackgroundOps({ ...settings, asyncCpu: 'half' }, api, () => 'x').start(target, { op: 'zip', path: 'w' }), JobSpecError);
  assert.deepEqual(api.calls, []);
  api.failCreate = true;
  await assert.rejects(new BackgroundOps(settings, api, () => 'x').start(target, { op: 'zip', path: 'w' }), (e: Error) => e instanceof RunnerError && /forbidden/.test(e.message));
});

test('an event key labels the Job; the same event finds that op again, and refuses another server, op, path or request', async () => {
  const api = new FakeApi();
  const bg = new BackgroundOps(settings, api, () => '00000000000000cd');
  const ev = { key: 'k1', request: 'r'.repeat(48) };
  assert.equal(await bg.eventOp('survival', { op: 'zip', path: 'world' }, ev), undefined);
  const first = await bg.start(target, { op: 'zip', path: 'world' }, ev);
  assert.equal(api.jobs[0]!.metadata!.labels!['felis.lolicon.best/event'], 'k1');
  assert.equal(api.jobs[0]!.metadata!.labels!['felis.lolicon.best/event-request'], 'r'.repeat(48));
  assert.deepEqual(await bg.eventOp('survival', { op: 'zip', path: 'world' }, ev), first);
  for (const [server, op, path] of [
    ['creative', 'zip', 'world'],
    ['survival', 'unzip', 'world'],
    ['survival', 'zip', 'plugins'],
  ] as const) {
    await assert.rejects(bg.eventOp(server, { op, path }, ev), EventConflictError);
  }
  // Same server, op and path, but the event carried another request (e.g. another body).
  await assert.rejects(
    bg.eventOp('survival', { op: 'zip', path: 'world' }, { key: 'k1', request: 's'.repeat(48) }),
    (e: unknown) => e instanceof EventConflictError && mapDomainError(e)?.status === 409,
  );
  assert.equal(api.calls.filter((c) => c.startsWith('create')).length, 1);
});
