import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import { type TestCluster, testCluster, waitFor } from './cluster.test-kit.ts';

const ECHO = join(import.meta.dirname, 'testdata', 'echo-args.mjs');

/** A Job shaped like a file Job: the felis binary, a world claim at /data. */
function filesJob(name: string, opId: string, args: string[]): V1Job {
  return {
    metadata: { name, labels: { 'felis.lolicon.best/files-op': opId } },
    spec: {
      backoffLimit: 0,
      template: {
        metadata: { labels: { 'felis.lolicon.best/files-op': opId } },
        spec: {
          restartPolicy: 'Never',
          volumes: [{ name: 'world', persistentVolumeClaim: { claimName: 'world-survival-0' } }],
          containers: [
            {
              name: 'files',
              image: 'felis-world/files:dev',
              command: ['/usr/local/bin/felis', 'files'],
              args,
              env: [
                { name: 'WORLD', value: '/data/world' },
                { name: 'GREETING', value: 'hello $(WORLD)' },
                { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
              ],
              volumeMounts: [{ name: 'world', mountPath: '/data' }],
            },
          ],
        },
      },
    },
  };
}

describe('local kubelet', () => {
  let t: TestCluster;
  const timing = new Map<string, { unscheduledMs: number; creatingMs: number }>();
  const programs: V1Pod[] = [];

  before(async () => {
    t = await testCluster({
      podTiming: (pod) => timing.get(pod.metadata?.labels?.['felis.lolicon.best/files-op'] ?? '') ?? { unscheduledMs: 0, creatingMs: 0 },
      program: (container, pod) => {
        if (container.command?.[0] !== '/usr/local/bin/felis') return undefined;
        programs.push(pod);
        return { command: [process.execPath, ECHO, ...(container.args ?? [])] };
      },
    });
    mkdirSync(join(t.dataDir, 'worlds', 'survival'), { recursive: true });
    writeFileSync(join(t.dataDir, 'worlds', 'survival', 'motd.txt'), 'hello world\n');
  });
  after(() => t.close());

  const podOf = (job: string, pred: (p: V1Pod) => boolean) =>
    waitFor(async () => (await t.core.listNamespacedPod({ namespace: 'minecraft', labelSelector: `job-name=${job}` })).items.find(pred), `pod of ${job}`, 8000);

  it('a Pod whose claim does not exist stays unscheduled, and runs once it does', async () => {
    await t.batch.createNamespacedJob({ namespace: 'minecraft', body: filesJob('noclaim', 'op-noclaim', ['/data/motd.txt']) });
    const pending = await podOf('noclaim', () => true);
    await new Promise((r) => setTimeout(r, 150));
    const still = await t.core.readNamespacedPod({ namespace: 'minecraft', name: pending.metadata!.name! });
    assert.equal(still.spec!.nodeName, undefined);
    assert.equal(still.status!.phase, 'Pending');
    await t.core.createNamespacedPersistentVolumeClaim({
      namespace: 'minecraft',
      body: { metadata: { name: 'world-survival-0' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
    });
    const done = await podOf('noclaim', (p) => p.status?.phase === 'Succeeded');
    assert.equal(done.spec!.nodeName, 'local');
  });

  it('mountPath arguments and env values are rewritten to the claim directory; $(VAR) and fieldRef env', async () => {
    await t.batch.createNamespacedJob({ namespace: 'minecraft', body: filesJob('mapped', 'op-mapped', ['/data/motd.txt', '/data', '/database']) });
    const pod = await podOf('mapped', (p) => p.status?.phase === 'Succeeded');
    const world = join(t.dataDir, 'worlds', 'survival');
    const log = await t.core.readNamespacedPodLog({ namespace: 'minecraft', name: pod.metadata!.name! });
    assert.equal(
      log,
      [
        `arg ${world}/motd.txt`,
        `arg ${world}`,
        'arg /database',
        `env WORLD=${world}/world`,
        `env POD_NAME=${pod.metadata!.name}`,
        // Only a whole value equal to, or under, the mountPath is rewritten.
        'env GREETING=hello /data/world',
        `cwd ${t.dataDir}`,
        'read hello world',
        '',
      ].join('\n'),
    );
    assert.ok(programs.some((p) => p.metadata?.name === pod.metadata!.name));
  });

  it('podTiming delays scheduling and start; podRecord has ordered timestamps', async () => {
    timing.set('op-timed', { unscheduledMs: 120, creatingMs: 150 });
    await t.batch.createNamespacedJob({ namespace: 'minecraft', body: filesJob('timed', 'op-timed', ['/data/motd.txt']) });
    const creating = await podOf('timed', (p) => !!p.spec?.nodeName);
    if (creating.status?.phase === 'Pending') {
      assert.equal(creating.status.containerStatuses?.[0]?.state?.waiting?.reason, 'ContainerCreating');
    }
    await podOf('timed', (p) => p.status?.phase === 'Succeeded');
    const rec = t.cluster.podRecord('op-timed')!;
    assert.ok(rec, 'a record by op label');
    assert.ok(rec.jobCreated <= rec.podCreated);
    assert.ok(rec.scheduled! - rec.podCreated >= 115, `unscheduled for ${rec.scheduled! - rec.podCreated} ms`);
    assert.ok(rec.started! - rec.scheduled! >= 145, `creating for ${rec.started! - rec.scheduled!} ms`);
    assert.ok(rec.exited! >= rec.started!);
    assert.deepEqual(t.cluster.podRecord(creating.metadata!.name!), rec);
  });

  it('fault overrides of the timing, and neverSchedule released by clear()', async () => {
    t.cluster.faults.pod('felis.lolicon.best/files-op=op-held', { neverSchedule: true });
    await t.batch.createNamespacedJob({ namespace: 'minecraft', body: filesJob('held', 'op-held', ['/data/motd.txt']) });
    const p = await podOf('held', () => true);
    await new Promise((r) => setTimeout(r, 100));
    assert.equal((await t.core.readNamespacedPod({ namespace: 'minecraft', name: p.metadata!.name! })).spec!.nodeName, undefined);
    t.cluster.faults.clear();
    await podOf('held', (x) => x.status?.phase === 'Succeeded');
  });

  it('a missing executable is a StartError (exit 128) and the Pod fails', async () => {
    await t.batch.createNamespacedJob({
      namespace: 'minecraft',
      body: {
        metadata: { name: 'noexec' },
        spec: {
          backoffLimit: 0,
          template: { spec: { restartPolicy: 'Never', containers: [{ name: 'files', image: 'x:1', command: ['/nonexistent/binary'] }] } },
        },
      },
    });
    const pod = await podOf('noexec', (p) => p.status?.phase === 'Failed');
    const term = pod.status!.containerStatuses![0]!.state!.terminated!;
    assert.equal(term.exitCode, 128);
    assert.equal(term.reason, 'StartError');
    assert.match(term.message ?? '', /executable file not found/);
  });

  it('the world directory is where the process wrote', async () => {
    await t.batch.createNamespacedJob({
      namespace: 'minecraft',
      body: {
        metadata: { name: 'writer' },
        spec: {
          backoffLimit: 0,
          template: {
            spec: {
              restartPolicy: 'Never',
              volumes: [{ name: 'world', persistentVolumeClaim: { claimName: 'world-survival-0' } }],
              containers: [
                {
                  name: 'files',
                  image: 'busybox:1.36',
                  command: ['sh', '-c', 'echo "$1" > "$2"', 'sh', 'written', '/data/sub/out.txt'],
                  volumeMounts: [{ name: 'world', mountPath: '/data/sub', subPath: 'nested' }],
                },
              ],
            },
          },
        },
      },
    });
    await podOf('writer', (p) => p.status?.phase === 'Succeeded');
    assert.equal(readFileSync(join(t.dataDir, 'worlds', 'survival', 'nested', 'out.txt'), 'utf8'), 'written\n');
  });

  it('a Pod without a Job (a game Pod) is stored but never run', async () => {
    await t.core.createNamespacedPod({
      namespace: 'minecraft',
      body: { metadata: { name: 'survival-0', labels: { app: 'mc' } }, spec: { containers: [{ name: 'mc', image: 'mc:1', command: ['sh', '-c', 'exit 0'] }] } },
    });
    await new Promise((r) => setTimeout(r, 100));
    const p = await t.core.readNamespacedPod({ namespace: 'minecraft', name: 'survival-0' });
    assert.equal(p.spec!.nodeName, undefined);
    assert.equal(p.status!.phase, 'Pending');
    const running = await t.core.patchNamespacedPodStatus({
      namespace: 'minecraft',
      name: 'survival-0',
      body: [{ op: 'replace', path: '/status/phase', value: 'Running' }],
    });
    assert.equal(running.status!.phase, 'Running');
  });
});
