import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { BatchV1Api, CoreV1Api } from '@kubernetes/client-node';
import { RBAC_MANIFEST, shJob, waitFor } from './cluster.test-kit.ts';
import { startCluster } from './index.ts';
import { minecraftServers } from './kinds/custom.ts';
import { jobs } from './kinds/job.ts';
import { persistentVolumeClaims, pods } from './kinds/pod.ts';
import { endRecordedProcesses, isRecordedProcessAlive, processStartTicks } from './kubelet/processes.ts';
import { PersistentState } from './persist.ts';
import { Registry } from './registry.ts';
import { Store } from './store.ts';

const dirs: string[] = [];
const procs: { pid: number; startTicks: string }[] = [];
after(() => {
  // Only what is still the process this file started (a pid may have been reused since).
  for (const p of procs) {
    if (!isRecordedProcessAlive(p.pid, p.startTicks)) continue;
    try {
      process.kill(-p.pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'felis-node-restart-'));
  dirs.push(d);
  return d;
}

/** A process in its own group, as the kubelet starts a container, left running "by a crash". */
function orphan(): { pid: number; startTicks: string } {
  const p = spawn('sleep', ['30'], { detached: true, stdio: 'ignore' });
  p.unref();
  const rec = { pid: p.pid!, startTicks: processStartTicks(p.pid!)! };
  procs.push(rec);
  return rec;
}

/** A Pod bound to the node with a running container, as the previous run left it (no owner, so no controller replaces it). */
function runningPod(name: string) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: { nodeName: 'local', restartPolicy: 'Never', containers: [{ name: 'main', image: 'x', command: ['sleep', '30'] }] },
  };
}

describe('recorded processes', () => {
  it('are found by pid and start time even when the command name holds ") " and spaces', async () => {
    const dir = tmp();
    const odd = join(dir, 'a) b (c');
    copyFileSync('/bin/sleep', odd);
    const p = spawn(odd, ['30'], { detached: true, stdio: 'ignore' });
    p.unref();
    await new Promise((r) => p.once('spawn', r));
    const rec = { pid: p.pid!, startTicks: processStartTicks(p.pid!)! };
    procs.push(rec);
    assert.match(rec.startTicks, /^\d+$/);
    assert.ok(isRecordedProcessAlive(rec.pid, rec.startTicks));
    const { killed, survivors } = await endRecordedProcesses([rec, { pid: rec.pid, startTicks: '1' }]);
    assert.deepEqual(killed, [rec.pid]);
    assert.deepEqual(survivors, []);
    assert.ok(!isRecordedProcessAlive(rec.pid, rec.startTicks));
  });
});

describe('a node restart', () => {
  it('ends the recorded Pod processes before the cluster answers and marks their Pods Failed (NodeRestarted)', async () => {
    const dataDir = tmp();
    const live = orphan();
    const reused = orphan();
    {
      const state = PersistentState.open(dataDir);
      const registry = new Registry(new Store(['minecraft'], state), [jobs, pods, persistentVolumeClaims, minecraftServers]);
      const podDef = registry.byResource('pods');
      for (const name of ['crashed', 'reused']) {
        const { obj } = registry.create(podDef, 'minecraft', runningPod(name));
        registry.update(
          podDef,
          'minecraft',
          name,
          (cur) => ({
            ...cur,
            status: {
              phase: 'Running',
              containerStatuses: [{ name: 'main', ready: true, restartCount: 0, image: 'x', imageID: '', containerID: 'containerd://1', state: { running: { startedAt: '2026-01-01T00:00:00Z' } } }],
            },
          }),
          { subresource: 'status' },
        );
        const rec = name === 'crashed' ? live : { pid: reused.pid, startTicks: String(Number(reused.startTicks) - 1) };
        state.record({ podUid: obj.metadata.uid!, container: 'main', namespace: 'minecraft', pod: name, pid: rec.pid, startTicks: rec.startTicks });
      }
      // The scratch volume the crashed Pod had, and one of a Pod long gone.
      mkdirSync(join(dataDir, '.pods', registry.get(podDef, 'minecraft', 'crashed').metadata.uid!, 'volumes', 'tmp'), { recursive: true });
      mkdirSync(join(dataDir, '.pods', 'gone-uid'), { recursive: true });
      state.close();
    }
    assert.ok(isRecordedProcessAlive(live.pid, live.startTicks));

    const cluster = await startCluster({ dataDir, rbacManifest: RBAC_MANIFEST, persist: true });
    try {
      assert.ok(!isRecordedProcessAlive(live.pid, live.startTicks), 'the recorded process is dead once startCluster returns');
      assert.deepEqual(cluster.nodeRestart.killed, [live.pid]);
      // Same pid, another start time: another process, never signalled.
      assert.ok(isRecordedProcessAlive(reused.pid, reused.startTicks), 'a process whose start time differs is left alone');
      const core = cluster.kubeConfig(cluster.adminToken).makeApiClient(CoreV1Api);
      for (const name of ['crashed', 'reused']) {
        const pod = await core.readNamespacedPod({ name, namespace: 'minecraft' });
        assert.equal(pod.status?.phase, 'Failed');
        assert.equal(pod.status?.reason, 'NodeRestarted');
        assert.equal(pod.status?.containerStatuses?.[0]?.state?.terminated?.exitCode, 137);
      }
      assert.ok(!existsSync(join(dataDir, '.pods', 'gone-uid')), 'scratch folders of Pods that will not run again are removed');
      assert.deepEqual(existsSync(join(dataDir, '.pods')) ? readdirSync(join(dataDir, '.pods')) : [], []);
    } finally {
      await cluster.close();
    }
  });

  it('a Job running when the cluster stopped counts each failed Pod once and carries on', async () => {
    const dataDir = tmp();
    const mark = join(dataDir, 'first-attempt-done');
    // The first attempt fails; every later one runs long.
    const job = shJob('retries', `if [ -e "${mark}" ]; then sleep 30; else touch "${mark}"; exit 1; fi`);
    job.spec!.backoffLimit = 2;
    const first = await startCluster({ dataDir, rbacManifest: RBAC_MANIFEST, backoffScale: 0.001, persist: true });
    const batch = first.kubeConfig(first.adminToken).makeApiClient(BatchV1Api);
    await batch.createNamespacedJob({ namespace: 'minecraft', body: job });
    const core = first.kubeConfig(first.adminToken).makeApiClient(CoreV1Api);
    await waitFor(async () => {
      const j = await batch.readNamespacedJob({ name: 'retries', namespace: 'minecraft' });
      const running = (await core.listNamespacedPod({ namespace: 'minecraft' })).items.some((p) => p.status?.phase === 'Running');
      return j.status?.failed === 1 && running ? j : undefined;
    }, 'one failed attempt and a second one running');
    await first.close();

    const second = await startCluster({ dataDir, rbacManifest: RBAC_MANIFEST, backoffScale: 0.001, persist: true });
    try {
      const batch2 = second.kubeConfig(second.adminToken).makeApiClient(BatchV1Api);
      // The second attempt ended with the restart: 2 failures, within backoffLimit 2, so a third runs.
      const j = await waitFor(async () => {
        const x = await batch2.readNamespacedJob({ name: 'retries', namespace: 'minecraft' });
        return x.status?.failed === 2 && x.status?.active === 1 ? x : undefined;
      }, 'the restart counted as one more failure and a new attempt');
      assert.ok(!(j.status?.conditions ?? []).some((c) => c.type === 'Failed'), 'the Job is not failed by a double count');
    } finally {
      await second.close();
    }
  });

  it('an orderly stop ends the running Pods and stores how they ended, so the journal is left empty', async () => {
    const dataDir = tmp();
    const cluster = await startCluster({ dataDir, rbacManifest: RBAC_MANIFEST, backoffScale: 0.001, persist: true });
    const kc = cluster.kubeConfig(cluster.adminToken);
    const batch = kc.makeApiClient(BatchV1Api);
    const core = kc.makeApiClient(CoreV1Api);
    await batch.createNamespacedJob({ namespace: 'minecraft', body: shJob('quick', 'exit 0') });
    await batch.createNamespacedJob({ namespace: 'minecraft', body: shJob('long', 'sleep 30') });
    await waitFor(async () => {
      const q = await batch.readNamespacedJob({ name: 'quick', namespace: 'minecraft' });
      const running = (await core.listNamespacedPod({ namespace: 'minecraft', labelSelector: 'job-name=long' })).items.some((p) => p.status?.phase === 'Running');
      return (q.status?.conditions ?? []).some((c) => c.type === 'Complete') && running ? true : undefined;
    }, 'one Job complete and the other running');
    await cluster.close();
    const state = PersistentState.open(dataDir);
    try {
      assert.deepEqual(state.list(), []);
      const store = new Store(['minecraft'], state);
      const phases = Object.fromEntries(store.list('pods').map((p) => [p.metadata.labels?.['job-name'], p.status?.phase]));
      assert.deepEqual(phases, { quick: 'Succeeded', long: 'Failed' });
      const long = store.list('pods').find((p) => p.metadata.labels?.['job-name'] === 'long')!;
      assert.equal(long.status.containerStatuses[0].state.terminated.exitCode, 137);
    } finally {
      state.close();
    }
  });

  it('a graceful stop (shutdownGraceMs) sends SIGTERM first: a Pod that finishes on it has its last words in its log after the restart', async () => {
    const script = "trap 'echo finished-on-term; exit 0' TERM; echo started; while true; do sleep 0.05; done";
    const lastWords = async (graceMs: number): Promise<string> => {
      const dataDir = tmp();
      const cluster = await startCluster({ dataDir, rbacManifest: RBAC_MANIFEST, backoffScale: 0.001, persist: true, shutdownGraceMs: graceMs });
      const core = cluster.kubeConfig(cluster.adminToken).makeApiClient(CoreV1Api);
      await cluster
        .kubeConfig(cluster.adminToken)
        .makeApiClient(BatchV1Api)
        .createNamespacedJob({ namespace: 'minecraft', body: shJob('trapping', script) });
      const pod = await waitFor(async () => {
        const p = (await core.listNamespacedPod({ namespace: 'minecraft', labelSelector: 'job-name=trapping' })).items[0];
        if (p?.status?.phase !== 'Running') return undefined;
        const log = await core.readNamespacedPodLog({ namespace: 'minecraft', name: p.metadata!.name!, container: 'files' });
        return log.includes('started') ? p.metadata!.name! : undefined;
      }, 'the trapping Pod running');
      await cluster.close();
      const again = await startCluster({ dataDir, rbacManifest: RBAC_MANIFEST, backoffScale: 0.001, persist: true });
      try {
        return await again.kubeConfig(again.adminToken).makeApiClient(CoreV1Api).readNamespacedPodLog({ namespace: 'minecraft', name: pod, container: 'files' });
      } finally {
        await again.close();
      }
    };
    assert.match(await lastWords(3000), /^started\n[\s\S]*finished-on-term\n$/);
    // Without a grace, a stop is a crash: SIGKILL, no last words.
    assert.doesNotMatch(await lastWords(0), /finished-on-term/);
  });
});
