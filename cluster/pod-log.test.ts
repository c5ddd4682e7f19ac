import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { ApiException, Log, type V1Pod } from '@kubernetes/client-node';
import { rawFetch, shJob, statusOf, type TestCluster, testCluster, waitFor } from './cluster.test-kit.ts';

describe('pods/log', () => {
  let t: TestCluster;
  before(async () => {
    t = await testCluster();
  });
  after(() => t.close());

  const podOf = (job: string, pred: (p: V1Pod) => boolean = () => true) =>
    waitFor(async () => (await t.core.listNamespacedPod({ namespace: 'minecraft', labelSelector: `job-name=${job}` })).items.find(pred), `pod of ${job}`);

  const finished = (p: V1Pod) => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed';

  it('204 with no Content-Type while unscheduled; client-node throws its plain parse Error', async () => {
    t.cluster.faults.pod('case=unscheduled', { neverSchedule: true });
    await t.batch.createNamespacedJob({ namespace: 'minecraft', body: shJob('unsched', 'echo hi', { labels: { case: 'unscheduled' } }) });
    const pod = await podOf('unsched');
    assert.equal(pod.spec!.nodeName, undefined);
    const res = await rawFetch(t.cluster, `/api/v1/namespaces/minecraft/pods/${pod.metadata!.name}/log?container=files`);
    assert.equal(res.status, 204);
    assert.equal(res.headers.get('content-type'), null);
    assert.equal(await res.text(), '');
    await assert.rejects(t.core.readNamespacedPodLog({ namespace: 'minecraft', name: pod.metadata!.name!, container: 'files' }), (err: unknown) => {
      assert.ok(!(err instanceof ApiException));
      assert.equal((err as Error).message, 'Cannot parse content. No Content-Type defined.');
      return true;
    });
    // The streaming Log helper reports it as code 204 without a body.
    const sink = new Writable({ write: (_c, _e, cb) => cb() });
    await assert.rejects(new Log(t.admin).log('minecraft', pod.metadata!.name!, 'files', sink), (err: unknown) => {
      assert.ok(err instanceof ApiException);
      assert.equal(err.code, 204);
      return true;
    });
  });

  it('400 while the container is waiting in ContainerCreating', async () => {
    t.cluster.faults.pod('case=creating', { neverStart: true });
    await t.batch.createNamespacedJob({ namespace: 'minecraft', body: shJob('creating', 'echo hi', { labels: { case: 'creating' } }) });
    const pod = await podOf('creating', (p) => !!p.spec?.nodeName && !!p.status?.containerStatuses?.length);
    const state = pod.status!.containerStatuses![0]!.state!;
    assert.equal(state.waiting?.reason, 'ContainerCreating');
    assert.equal(state.running, undefined);
    assert.equal(pod.status!.phase, 'Pending');
    const s = await statusOf(t.core.readNamespacedPodLog({ namespace: 'minecraft', name: pod.metadata!.name!, container: 'files' }));
    assert.equal(s.code, 400);
    assert.deepEqual(s.body, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: `container "files" in pod "${pod.metadata!.name}" is waiting to start: ContainerCreating`,
      reason: 'BadRequest',
      code: 400,
    });
  });

  it('container errors, option validation and a missing pod', async () => {
    await t.batch.createNamespacedJob({ namespace: 'minecraft', body: shJob('lines', 'for i in $(seq 1 20); do echo "line $i"; done') });
    const pod = await podOf('lines', finished);
    const name = pod.metadata!.name!;
    const bad = await statusOf(t.core.readNamespacedPodLog({ namespace: 'minecraft', name, container: 'nope' }));
    assert.equal(bad.code, 400);
    assert.equal(bad.body.message, `container nope is not valid for pod ${name}`);
    const neg = await statusOf(t.core.readNamespacedPodLog({ namespace: 'minecraft', name, tailLines: -1, limitBytes: 0 } as never));
    // client-node drops limitBytes: 0 (falsy) from the query, so only tailLines reaches the server.
    assert.equal(neg.code, 422);
    assert.equal(neg.body.details.kind, 'PodLogOptions');
    const both = await rawFetch(t.cluster, `/api/v1/namespaces/minecraft/pods/${name}/log?tailLines=-1&limitBytes=0`);
    assert.equal(both.status, 422);
    assert.equal(
      (await both.json()).message,
      `PodLogOptions "${name}" is invalid: [tailLines: Invalid value: -1: must be greater than or equal to 0, limitBytes: Invalid value: 0: must be greater than 0]`,
    );
    const nonInt = await rawFetch(t.cluster, `/api/v1/namespaces/minecraft/pods/${name}/log?tailLines=abc`);
    assert.equal(nonInt.status, 400);
    assert.equal((await nonInt.json()).message, 'strconv.ParseInt: parsing "abc": invalid syntax');
    const missing = await statusOf(t.core.readNamespacedPodLog({ namespace: 'minecraft', name: 'nopod' }));
    assert.equal(missing.code, 404);
    assert.equal(missing.body.message, 'pods "nopod" not found');
    const prev = await statusOf(t.core.readNamespacedPodLog({ namespace: 'minecraft', name, previous: true }));
    assert.equal(prev.code, 400);
    assert.equal(prev.body.message, `previous terminated container "files" in pod "${name}" not found`);
  });

  it('text/plain logs; tail then limitBytes; timestamps', async () => {
    const pod = await podOf('lines', finished);
    const name = pod.metadata!.name!;
    const all = await t.core.readNamespacedPodLog({ namespace: 'minecraft', name, container: 'files' });
    assert.equal(typeof all, 'string');
    assert.equal(all, Array.from({ length: 20 }, (_, i) => `line ${i + 1}\n`).join(''));
    assert.equal(await t.core.readNamespacedPodLog({ namespace: 'minecraft', name, tailLines: 2 }), 'line 19\nline 20\n');
    assert.equal(await t.core.readNamespacedPodLog({ namespace: 'minecraft', name, tailLines: 5, limitBytes: 12 }), 'line 16\nline');
    const res = await rawFetch(t.cluster, `/api/v1/namespaces/minecraft/pods/${name}/log?tailLines=1&timestamps=true`);
    assert.equal(res.headers.get('content-type'), 'text/plain');
    assert.match(await res.text(), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z line 20\n$/);
  });

  it('sinceSeconds keeps the lines received in the window', async () => {
    await t.batch.createNamespacedJob({ namespace: 'minecraft', body: shJob('since', 'echo old; sleep 1.3; echo new') });
    const pod = await podOf('since', finished);
    assert.equal(await t.core.readNamespacedPodLog({ namespace: 'minecraft', name: pod.metadata!.name!, sinceSeconds: 1 }), 'new\n');
    const res = await rawFetch(t.cluster, `/api/v1/namespaces/minecraft/pods/${pod.metadata!.name}/log?sinceSeconds=0`);
    assert.equal(res.status, 422);
  });

  it('stdout and stderr are merged in order', async () => {
    await t.batch.createNamespacedJob({ namespace: 'minecraft', body: shJob('merged', 'echo out1; sleep 0.05; echo err1 >&2; sleep 0.05; echo out2') });
    const pod = await podOf('merged', finished);
    assert.equal(await t.core.readNamespacedPodLog({ namespace: 'minecraft', name: pod.metadata!.name! }), 'out1\nerr1\nout2\n');
  });

  it('follow streams lines as they are written and ends when the container exits', async () => {
    await t.batch.createNamespacedJob({
      namespace: 'minecraft',
      body: shJob('follow', 'echo first; sleep 0.4; echo second; sleep 0.4; echo third'),
    });
    const pod = await podOf('follow', (p) => p.status?.phase === 'Running');
    const t0 = Date.now();
    const res = await rawFetch(t.cluster, `/api/v1/namespaces/minecraft/pods/${pod.metadata!.name}/log?container=files&follow=true`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/plain');
    const reader = res.body!.getReader();
    const chunks: { text: string; at: number }[] = [];
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      chunks.push({ text: Buffer.from(value).toString(), at: Date.now() - t0 });
    }
    const text = chunks.map((c) => c.text).join('');
    assert.equal(text, 'first\nsecond\nthird\n');
    // "first" arrived well before "third": it was streamed, not buffered until the end.
    const firstAt = chunks.find((c) => c.text.includes('first'))!.at;
    const thirdAt = chunks.find((c) => c.text.includes('third'))!.at;
    assert.ok(thirdAt - firstAt >= 300, `first at ${firstAt} ms, third at ${thirdAt} ms`);
  });

  it('follow through client-node Log ends when the container terminates', async () => {
    await t.batch.createNamespacedJob({ namespace: 'minecraft', body: shJob('follow2', 'echo a; sleep 0.2; echo b') });
    const pod = await podOf('follow2', (p) => p.status?.phase === 'Running');
    let out = '';
    await new Promise<void>((resolve, reject) => {
      const sink = new Writable({
        write(c, _e, cb) {
          out += c.toString();
          cb();
        },
        final(cb) {
          resolve();
          cb();
        },
      });
      new Log(t.admin).log('minecraft', pod.metadata!.name!, 'files', sink, { follow: true }).catch(reject);
    });
    assert.equal(out, 'a\nb\n');
  });

  it('follow ends when the client disconnects', async () => {
    await t.batch.createNamespacedJob({ namespace: 'minecraft', body: shJob('forever', 'echo tick; sleep 30') });
    const pod = await podOf('forever', (p) => p.status?.phase === 'Running');
    const ac = new AbortController();
    const res = await t.cluster.fetch(`/api/v1/namespaces/minecraft/pods/${pod.metadata!.name}/log?follow=true`, {
      headers: { authorization: `Bearer ${t.cluster.adminToken}` },
      signal: ac.signal,
    });
    const reader = res.body!.getReader();
    const first = await reader.read();
    assert.equal(Buffer.from(first.value!).toString(), 'tick\n');
    ac.abort();
    await assert.rejects(reader.read());
    await t.batch.deleteNamespacedJob({ namespace: 'minecraft', name: 'forever', propagationPolicy: 'Background' });
  });

  it('a Pod with several containers needs a container name', async () => {
    const body = shJob('two', 'echo main');
    body.spec!.template.spec!.containers.push({ name: 'side', image: 'busybox:1.36', command: ['sh', '-c', 'echo side'] });
    await t.batch.createNamespacedJob({ namespace: 'minecraft', body });
    const pod = await podOf('two', finished);
    const s = await statusOf(t.core.readNamespacedPodLog({ namespace: 'minecraft', name: pod.metadata!.name! }));
    assert.equal(s.code, 400);
    assert.equal(s.body.message, `a container name must be specified for pod ${pod.metadata!.name}, choose one of: [files side]`);
    assert.equal(await t.core.readNamespacedPodLog({ namespace: 'minecraft', name: pod.metadata!.name!, container: 'side' }), 'side\n');
  });
});
