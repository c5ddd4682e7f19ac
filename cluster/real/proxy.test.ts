/**
 * The cluster tier's counting proxy, here in front of the embedded cluster: it counts by user and
 * `<verb> <resource>` as the embedded server does, injects `failNext` faults, and streams a
 * followed log chunk by chunk, and an unscheduled Pod's bodiless 204 unchanged.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { BatchV1Api, CoreV1Api } from '@kubernetes/client-node';
import { request } from 'undici';
import { FELIS_USER, shJob, statusOf, type TestCluster, testCluster, waitFor } from '../cluster.test-kit.ts';
import { Faults } from '../faults.ts';
import { tokenKubeConfig } from '../kubeconfig.ts';
import { type CountingProxy, startCountingProxy } from './proxy.ts';

describe('counting proxy', () => {
  let t: TestCluster;
  let proxy: CountingProxy;
  const faults = new Faults();
  let fnToken: string;
  const kc = (token: string) => tokenKubeConfig(proxy.url, token, 'proxy');

  before(async () => {
    t = await testCluster({ podTiming: (pod) => ({ unscheduledMs: pod.metadata?.labels?.slow ? 3_600_000 : 0, creatingMs: 0 }) });
    fnToken = t.cluster.tokenFor('minecraft', 'felis-world');
    proxy = await startCountingProxy({
      upstream: t.cluster.url,
      users: new Map([
        [t.cluster.adminToken, 'admin'],
        [fnToken, FELIS_USER],
      ]),
      faults,
    });
  });
  after(async () => {
    await proxy.close();
    await t.close();
  });

  it('counts requests by user and verb as the embedded server does, 403s included', async () => {
    const core = kc(fnToken).makeApiClient(CoreV1Api);
    await core.listNamespacedPod({ namespace: 'minecraft' });
    await core.listNamespacedPod({ namespace: 'minecraft', labelSelector: 'a=b' });
    assert.equal((await statusOf(core.readNamespacedPod({ namespace: 'minecraft', name: 'x' }))).code, 403);
    await kc(t.cluster.adminToken).makeApiClient(BatchV1Api).listNamespacedJob({ namespace: 'minecraft' });
    const raw = await fetch(`${proxy.url}/api/v1/namespaces/minecraft/pods?watch=true`, { headers: { authorization: `Bearer ${fnToken}` } });
    assert.equal(raw.status, 403);
    await raw.text();
    assert.deepEqual(proxy.counter.counts(FELIS_USER), { 'list pods': 2, 'get pods': 1, 'watch pods': 1 });
    assert.deepEqual(proxy.counter.counts('admin'), { 'list jobs': 1 });
    // The embedded server behind it counted the same requests.
    assert.deepEqual(t.cluster.counts(FELIS_USER), proxy.counter.counts(FELIS_USER));
  });

  it('answers an injected fault itself, once, and forwards the next request', async () => {
    faults.failNext({ verb: 'create', resource: 'jobs', user: FELIS_USER, code: 500, reason: 'InternalError', message: 'etcdserver: request timed out' });
    const batch = kc(fnToken).makeApiClient(BatchV1Api);
    const failed = await statusOf(batch.createNamespacedJob({ namespace: 'minecraft', body: shJob('faulted', 'true') }));
    assert.equal(failed.code, 500);
    assert.equal(failed.body.message, 'etcdserver: request timed out');
    assert.equal(t.cluster.counts(FELIS_USER)['create jobs'] ?? 0, 0, 'the fault never reached the server');
    await batch.createNamespacedJob({ namespace: 'minecraft', body: shJob('faulted', 'true') });
    assert.equal(t.cluster.counts(FELIS_USER)['create jobs'], 1);
  });

  it('streams a followed log chunk by chunk, and passes a 204 on without a Content-Type', async () => {
    await t.batch.createNamespacedJob({ namespace: 'minecraft', body: shJob('stream', 'echo one; sleep 0.8; echo two') });
    const pod = await waitFor(async () => {
      const p = (await t.core.listNamespacedPod({ namespace: 'minecraft', labelSelector: 'job-name=stream' })).items[0];
      return p?.status?.containerStatuses?.[0]?.state?.running ? p : undefined;
    }, 'the container runs');
    const t0 = performance.now();
    const res = await request(`${proxy.url}/api/v1/namespaces/minecraft/pods/${pod.metadata!.name}/log?follow=true`, { headers: { authorization: `Bearer ${fnToken}` } });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'text/plain');
    const chunks: [number, string][] = [];
    for await (const c of res.body) chunks.push([performance.now() - t0, c.toString()]);
    assert.deepEqual(
      chunks.map(([, c]) => c),
      ['one\n', 'two\n'],
    );
    assert.ok(chunks[1]![0] - chunks[0]![0] >= 500, 'the second line came when it was written');

    await t.batch.createNamespacedJob({ namespace: 'minecraft', body: shJob('slow', 'true', { labels: { slow: 'yes' } }) });
    const unscheduled = await waitFor(async () => (await t.core.listNamespacedPod({ namespace: 'minecraft', labelSelector: 'job-name=slow' })).items[0], 'the Pod');
    const r204 = await request(`${proxy.url}/api/v1/namespaces/minecraft/pods/${unscheduled.metadata!.name}/log`, { headers: { authorization: `Bearer ${fnToken}` } });
    assert.equal(r204.statusCode, 204);
    assert.equal(r204.headers['content-type'], undefined);
    assert.equal(await r204.body.text(), '');
  });
});
