import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { V1Job, V1JobCondition, V1Pod } from '@kubernetes/client-node';
import { shJob, type TestCluster, testCluster, waitFor } from './cluster.test-kit.ts';

const conds = (j: V1Job) => (j.status?.conditions ?? []).map((c) => [c.type, c.status, c.reason, c.message]);

describe('Job controller', () => {
  let t: TestCluster;
  before(async () => {
    t = await testCluster({ ttlScale: 0.05 });
  });
  after(() => t.close());

  const job = (name: string) => t.batch.readNamespacedJob({ namespace: 'minecraft', name });
  const podsOf = async (name: string) => (await t.core.listNamespacedPod({ namespace: 'minecraft', labelSelector: `batch.kubernetes.io/job-name=${name}` })).items;
  const finished = (name: string) =>
    waitFor(async () => {
      const j = await job(name);
      return j.status?.conditions?.some((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True') ? j : undefined;
    }, `${name} finished`);

  it('success: one Pod with labels, owner, finalizer released; SuccessCriteriaMet then Complete', async () => {
    const created = await t.batch.createNamespacedJob({
      namespace: 'minecraft',
      body: shJob('ok', 'echo done', { labels: { 'felis.lolicon.best/files-op': 'op-ok' } }),
    });
    const j = await finished('ok');
    assert.deepEqual(conds(j), [
      ['SuccessCriteriaMet', 'True', 'CompletionsReached', 'Reached expected number of succeeded pods'],
      ['Complete', 'True', 'CompletionsReached', 'Reached expected number of succeeded pods'],
    ]);
    assert.equal(j.status!.succeeded, 1);
    assert.equal(j.status!.active, undefined); // omitempty: a zero count is not written
    assert.ok(j.status!.startTime instanceof Date);
    assert.ok(j.status!.completionTime instanceof Date);
    const [pod] = await podsOf('ok');
    assert.ok(pod);
    assert.match(pod.metadata!.name!, /^ok-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    assert.equal(pod.metadata!.generateName, 'ok-');
    const uid = created.metadata!.uid!;
    assert.deepEqual(pod.metadata!.labels, {
      'felis.lolicon.best/files-op': 'op-ok',
      'batch.kubernetes.io/controller-uid': uid,
      'batch.kubernetes.io/job-name': 'ok',
      'controller-uid': uid,
      'job-name': 'ok',
    });
    const ref = pod.metadata!.ownerReferences![0]!;
    assert.deepEqual(
      { apiVersion: ref.apiVersion, kind: ref.kind, name: ref.name, uid: ref.uid, controller: ref.controller, block: ref.blockOwnerDeletion },
      { apiVersion: 'batch/v1', kind: 'Job', name: 'ok', uid, controller: true, block: true },
    );
    await waitFor(async () => ((await podsOf('ok'))[0]!.metadata!.finalizers ?? []).length === 0 || undefined, 'finalizer released');
    assert.equal(pod.spec!.nodeName, 'local');
    assert.equal(pod.status!.phase, 'Succeeded');
    const term = pod.status!.containerStatuses![0]!.state!.terminated!;
    assert.equal(term.exitCode, 0);
    assert.equal(term.reason, 'Completed');
    assert.ok(term.startedAt && term.finishedAt);
  });

  it('failure with backoffLimit 0: FailureTarget then Failed (BackoffLimitExceeded)', async () => {
    await t.batch.createNamespacedJob({ namespace: 'minecraft', body: shJob('bad', 'echo oops >&2; exit 3') });
    const j = await finished('bad');
    assert.deepEqual(conds(j), [
      ['FailureTarget', 'True', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit'],
      ['Failed', 'True', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit'],
    ]);
    assert.equal(j.status!.failed, 1);
    assert.equal(j.status!.completionTime, undefined);
    const pods = await podsOf('bad');
    assert.equal(pods.length, 1);
    assert.equal(pods[0]!.status!.phase, 'Failed');
    assert.equal(pods[0]!.status!.containerStatuses![0]!.state!.terminated!.exitCode, 3);
    assert.equal(pods[0]!.status!.containerStatuses![0]!.state!.terminated!.reason, 'Error');
  });

  it('backoffLimit 2 retries with new Pods, then fails', async () => {
    await t.batch.createNamespacedJob({ namespace: 'minecraft', body: shJob('retry', 'exit 1', { spec: { backoffLimit: 2 } }) });
    const j = await finished('retry');
    assert.equal(j.status!.failed, 3);
    assert.equal((await podsOf('retry')).length, 3);
    assert.equal(conds(j)[1]![0], 'Failed');
  });

  it('a retry can succeed', async () => {
    const marker = join(t.dataDir, 'retry-once');
    await t.batch.createNamespacedJob({
      namespace: 'minecraft',
      body: shJob('flaky', `if [ -e ${marker} ]; then echo ok; else touch ${marker}; exit 1; fi`, { spec: { backoffLimit: 3 } }),
    });
    const j = await finished('flaky');
    assert.equal(j.status!.failed, 1);
    assert.equal(j.status!.succeeded, 1);
    assert.equal(conds(j)[1]![0], 'Complete');
  });

  it('activeDeadlineSeconds kills the running process and fails the Job (DeadlineExceeded)', async () => {
    const marker = join(t.dataDir, 'deadline-survived');
    await t.batch.createNamespacedJob({
      namespace: 'minecraft',
      body: shJob('deadline', `sleep 2; touch ${marker}`, { spec: { activeDeadlineSeconds: 1 } }),
    });
    const running = await waitFor(async () => (await podsOf('deadline')).find((p) => p.status?.phase === 'Running'), 'running');
    const j = await finished('deadline');
    assert.deepEqual(conds(j), [
      ['FailureTarget', 'True', 'DeadlineExceeded', 'Job was active longer than specified deadline'],
      ['Failed', 'True', 'DeadlineExceeded', 'Job was active longer than specified deadline'],
    ]);
    assert.equal(j.status!.failed, 1);
    // The Pod was deleted, as the real controller does; its process was killed.
    await waitFor(async () => (await podsOf('deadline')).length === 0 || undefined, 'pod deleted');
    await new Promise((r) => setTimeout(r, 1300));
    assert.equal(existsSync(marker), false, 'the process ran past the deadline');
    assert.ok(running.metadata!.name);
  });

  it('activeDeadlineSeconds also applies to a Pod that never started', async () => {
    t.cluster.faults.pod('case=stuck', { neverStart: true });
    await t.batch.createNamespacedJob({
      namespace: 'minecraft',
      body: shJob('stuck', 'echo never', { labels: { case: 'stuck' }, spec: { activeDeadlineSeconds: 1 } }),
    });
    const j = await finished('stuck');
    assert.equal(conds(j)[1]![2], 'DeadlineExceeded');
    await waitFor(async () => (await podsOf('stuck')).length === 0 || undefined, 'pod deleted');
  });

  it('an OOM kill: terminated 137 OOMKilled, Pod Failed, Job Failed', async () => {
    t.cluster.faults.pod('case=oom', { oomKillAfterMs: 50 });
    await t.batch.createNamespacedJob({ namespace: 'minecraft', body: shJob('oom', 'sleep 5', { labels: { case: 'oom' } }) });
    const j = await finished('oom');
    assert.equal(conds(j)[1]![2], 'BackoffLimitExceeded');
    const [pod] = await podsOf('oom');
    assert.equal(pod!.status!.phase, 'Failed');
    const term = pod!.status!.containerStatuses![0]!.state!.terminated!;
    assert.equal(term.exitCode, 137);
    assert.equal(term.reason, 'OOMKilled');
  });

  it('ttlSecondsAfterFinished deletes the Job and its Pods (scaled)', async () => {
    await t.batch.createNamespacedJob({ namespace: 'minecraft', body: shJob('ttl', 'true', { spec: { ttlSecondsAfterFinished: 2 } }) });
    await finished('ttl').catch(() => undefined);
    await waitFor(async () => (await t.batch.listNamespacedJob({ namespace: 'minecraft', fieldSelector: 'metadata.name=ttl' })).items.length === 0 || undefined, 'ttl job gone');
    await waitFor(async () => (await podsOf('ttl')).length === 0 || undefined, 'ttl pods gone');
  });

  it('a holder Job runs a host command and stays active until deleted', async () => {
    await t.batch.createNamespacedJob({
      namespace: 'minecraft',
      body: shJob('holder', 'sleep 60', { labels: { 'felis.lolicon.best/server': 'survival' } }),
    });
    const j = await waitFor(async () => {
      const x = await job('holder');
      return x.status?.active === 1 && x.status?.ready === 1 ? x : undefined;
    }, 'holder ready');
    assert.equal(j.status!.conditions, undefined);
    const list = await t.batch.listNamespacedJob({ namespace: 'minecraft', labelSelector: 'felis.lolicon.best/server=survival' });
    assert.deepEqual(
      list.items.map((x) => x.metadata!.name),
      ['holder'],
    );
    await t.batch.deleteNamespacedJob({ namespace: 'minecraft', name: 'holder', propagationPolicy: 'Background' });
    await waitFor(async () => (await podsOf('holder')).length === 0 || undefined, 'holder pod gone');
  });

  it('setJobConditions marks a Job finished (e.g. a finished restore Job)', async () => {
    await t.batch.createNamespacedJob({ namespace: 'minecraft', body: shJob('restore', 'sleep 60') });
    await waitFor(async () => (await job('restore')).status?.active === 1 || undefined, 'restore active');
    const done: V1JobCondition[] = [
      { type: 'SuccessCriteriaMet', status: 'True', reason: 'CompletionsReached' },
      { type: 'Complete', status: 'True', reason: 'CompletionsReached' },
    ];
    t.cluster.setJobConditions('minecraft', 'restore', done);
    const j = await job('restore');
    assert.deepEqual(
      conds(j).map((c) => c.slice(0, 3)),
      [
        ['SuccessCriteriaMet', 'True', 'CompletionsReached'],
        ['Complete', 'True', 'CompletionsReached'],
      ],
    );
    assert.ok(j.status!.completionTime);
    assert.equal(j.status!.active, undefined);
    await t.batch.deleteNamespacedJob({ namespace: 'minecraft', name: 'restore', propagationPolicy: 'Background' });
  });

  it('restartPolicy OnFailure restarts the container in place; previous logs stay readable', async () => {
    const marker = join(t.dataDir, 'onfailure-once');
    const body = shJob('onfail', `if [ -e ${marker} ]; then echo second; else touch ${marker}; echo first; exit 1; fi`, { spec: { backoffLimit: 3 } });
    body.spec!.template.spec!.restartPolicy = 'OnFailure';
    await t.batch.createNamespacedJob({ namespace: 'minecraft', body });
    const j = await finished('onfail');
    assert.equal(conds(j)[1]![0], 'Complete');
    const pods = await podsOf('onfail');
    assert.equal(pods.length, 1);
    const cs = pods[0]!.status!.containerStatuses![0]!;
    assert.equal(cs.restartCount, 1);
    assert.equal(cs.lastState!.terminated!.exitCode, 1);
    const name = pods[0]!.metadata!.name!;
    assert.equal(await t.core.readNamespacedPodLog({ namespace: 'minecraft', name }), 'second\n');
    assert.equal(await t.core.readNamespacedPodLog({ namespace: 'minecraft', name, previous: true }), 'first\n');
  });

  it('deleting a running Job Pod kills it; the Job counts a failure and retries', async () => {
    await t.batch.createNamespacedJob({ namespace: 'minecraft', body: shJob('victim', 'sleep 60', { spec: { backoffLimit: 1 } }) });
    const p = await waitFor(async () => (await podsOf('victim')).find((x) => x.status?.phase === 'Running'), 'victim running');
    await t.core.deleteNamespacedPod({ namespace: 'minecraft', name: p.metadata!.name! });
    const replacement = await waitFor(async () => (await podsOf('victim')).find((x: V1Pod) => x.metadata!.name !== p.metadata!.name && x.status?.phase === 'Running'), 'replacement running');
    assert.ok(replacement);
    await waitFor(async () => ((await job('victim')).status?.failed === 1 ? true : undefined), 'failure counted');
    await t.batch.deleteNamespacedJob({ namespace: 'minecraft', name: 'victim', propagationPolicy: 'Background' });
  });
});
