import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import { EventConflictError } from '../events/errors.ts';
import { mapDomainError } from '../http/error-map.ts';
import { JobSpecError } from '../job-spec/render.ts';
import type { LogOpening, LogOptions } from '../kube/job-pods.ts';
import { formatProgressLine, formatResultLine } from '../protocol/result.ts';
import { RunnerError } from '../runner/errors.ts';
import { matches } from '../testing/fake-servers.ts';
import { type BackgroundApi, BackgroundOps, MAX_PULLS_PER_SERVER, TooManyPullsError } from './background.ts';
import { MAX_OPS, opsSelector } from './list.ts';

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

  const ops = await new BackgroundOps(settings, api, () => 'x').list('survival');
  assert.deepEqual(
    ops.map((o) => o.id),
    ['new', '00', '01', '02', '03', '04', '05', '06', '07', '08'],
  );
  assert.equal(ops.length, MAX_OPS);
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
  const ops = await new BackgroundOps(settings, api, () => 'x').list('survival');
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
  assert.deepEqual(await new BackgroundOps(settings, new FakeApi(), () => 'x').list('survival'), []);
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
