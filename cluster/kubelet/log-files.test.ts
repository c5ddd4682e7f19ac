import assert from 'node:assert/strict';
import { appendFileSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { BatchV1Api, CoreV1Api } from '@kubernetes/client-node';
import { RBAC_MANIFEST, shJob, statusOf, waitFor } from '../cluster.test-kit.ts';
import { startCluster } from '../index.ts';
import { formatCriLine, PodLogFiles, parseCriLines } from './log-files.ts';
import { ContainerLog, type LogLine } from './logs.ts';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'felis-log-files-'));
  dirs.push(d);
  return d;
}

const line = (t: bigint, text: string, stream: 'stdout' | 'stderr' = 'stdout'): LogLine => ({ t, stream, data: Buffer.from(text) });

describe('container log files', () => {
  it('round-trip CRI lines: full and partial, both streams, any bytes, nanosecond times', () => {
    const lines = [
      line(1_764_561_600_123_456_789n, 'progress 1/2\n'),
      line(1_764_561_600_200_000_001n, 'no newline at the end', 'stderr'),
      { t: 1_764_561_601_000_000_000n, stream: 'stdout' as const, data: Buffer.from([0xff, 0x00, 0x20, 0x0a]) },
      line(1_764_561_602_000_000_000n, '\n'),
    ];
    const buf = Buffer.concat(lines.map(formatCriLine));
    assert.match(buf.toString('latin1').split('\n')[0]!, /^2025-12-01T04:00:00\.123456789Z stdout F progress 1\/2$/);
    assert.deepEqual(parseCriLines(buf), lines);
  });

  it('skip a torn last line and lines of another shape', () => {
    const good = formatCriLine(line(1_000_000_000_000_000_000n, 'kept\n'));
    const parsed = parseCriLines(Buffer.concat([Buffer.from('garbage\n'), good, good.subarray(0, 20)]));
    assert.deepEqual(
      parsed.map((l) => l.data.toString()),
      ['kept\n'],
    );
  });

  it('rotate past the bound: at most two files, and always the last lines', () => {
    const files = new PodLogFiles(tmp(), { maxBytes: 4096 });
    const sink = files.open('minecraft', 'p-1', '0a1b', 'files', 0)!;
    const log = new ContainerLog(undefined, sink);
    for (let i = 0; i < 1000; i++) log.write('stdout', Buffer.from(`line ${i}\n`));
    log.end();
    const dir = join(files.dirOf('minecraft', 'p-1', '0a1b'), 'files');
    assert.deepEqual(readdirSync(dir).sort(), ['0.log', '0.log.1']);
    for (const f of readdirSync(dir)) assert.ok(statSync(join(dir, f)).size <= 4096, f);
    const back = files.read(files.dirOf('minecraft', 'p-1', '0a1b'), 'files', false)!;
    assert.equal(back.at(-1)!.data.toString(), 'line 999\n');
    assert.ok(back.length >= 80 && back.length < 1000, `${back.length} lines kept`);
    // In order, with no gap, up to the end.
    const first = Number(/\d+/.exec(back[0]!.data.toString())![0]);
    assert.deepEqual(
      back.map((l) => l.data.toString()),
      Array.from({ length: 1000 - first }, (_, i) => `line ${first + i}\n`),
    );
  });

  it('keep the current and the previous instance only, and read either', () => {
    const files = new PodLogFiles(tmp());
    for (let n = 0; n < 4; n++) {
      const s = files.open('minecraft', 'p-2', 'ff', 'files', n)!;
      s.write(line(BigInt(n) * 1_000_000_000n, `run ${n}\n`));
      s.close();
    }
    const pod = files.dirOf('minecraft', 'p-2', 'ff');
    assert.deepEqual(readdirSync(join(pod, 'files')).sort(), ['2.log', '3.log']);
    assert.equal(files.read(pod, 'files', false)![0]!.data.toString(), 'run 3\n');
    assert.equal(files.read(pod, 'files', true)![0]!.data.toString(), 'run 2\n');
    assert.equal(files.read(pod, 'other', false), undefined);
    assert.deepEqual(files.scan(), [{ namespace: 'minecraft', pod: 'p-2', uid: 'ff', dir: pod }]);
  });
});

describe('a persistent node', () => {
  it("serves a finished Pod's log after a restart, and removes the files with the Pod", async () => {
    const dataDir = tmp();
    const first = await startCluster({ dataDir, rbacManifest: RBAC_MANIFEST, backoffScale: 0.001, persist: true });
    let podName: string;
    let before: string;
    try {
      const admin = first.kubeConfig(first.adminToken);
      const batch = admin.makeApiClient(BatchV1Api);
      const core = admin.makeApiClient(CoreV1Api);
      await batch.createNamespacedJob({ namespace: 'minecraft', body: shJob('logged', 'for i in 1 2 3; do echo "line $i"; done; echo oops >&2; printf "FELIS-RESULT {}"') });
      const pod = await waitFor(
        async () => (await core.listNamespacedPod({ namespace: 'minecraft', labelSelector: 'job-name=logged' })).items.find((p) => p.status?.phase === 'Succeeded'),
        'the Pod to succeed',
      );
      podName = pod.metadata!.name!;
      before = await core.readNamespacedPodLog({ namespace: 'minecraft', name: podName, container: 'files' });
      assert.equal(before, 'line 1\nline 2\nline 3\noops\nFELIS-RESULT {}');
    } finally {
      await first.close();
    }
    assert.ok(existsSync(join(dataDir, 'pod-logs')));

    const second = await startCluster({ dataDir, rbacManifest: RBAC_MANIFEST, backoffScale: 0.001, persist: true });
    try {
      const core = second.kubeConfig(second.adminToken).makeApiClient(CoreV1Api);
      assert.equal(await core.readNamespacedPodLog({ namespace: 'minecraft', name: podName, container: 'files' }), before);
      assert.equal(await core.readNamespacedPodLog({ namespace: 'minecraft', name: podName, container: 'files', tailLines: 1 }), 'FELIS-RESULT {}');
      const prev = await statusOf(core.readNamespacedPodLog({ namespace: 'minecraft', name: podName, container: 'files', previous: true }));
      assert.equal(prev.code, 400);
      assert.equal(prev.body.message, `previous terminated container "files" in pod "${podName}" not found`);

      await core.deleteNamespacedPod({ namespace: 'minecraft', name: podName, gracePeriodSeconds: 0 });
      await waitFor(() => readdirSync(join(dataDir, 'pod-logs')).length === 0 || undefined, 'the log folder to go with its Pod');
    } finally {
      await second.close();
    }
  });

  it('an in-memory cluster writes no log files', async () => {
    const dataDir = tmp();
    const c = await startCluster({ dataDir, rbacManifest: RBAC_MANIFEST, backoffScale: 0.001 });
    try {
      const admin = c.kubeConfig(c.adminToken);
      await admin.makeApiClient(BatchV1Api).createNamespacedJob({ namespace: 'minecraft', body: shJob('mem', 'echo hi') });
      const core = admin.makeApiClient(CoreV1Api);
      await waitFor(async () => (await core.listNamespacedPod({ namespace: 'minecraft', labelSelector: 'job-name=mem' })).items.find((p) => p.status?.phase === 'Succeeded'), 'the Pod');
      assert.equal(existsSync(join(dataDir, 'pod-logs')), false);
    } finally {
      await c.close();
    }
  });
});

// Appending garbage after a file's end (a crash mid-line) must not cost the lines before it.
it('a log file cut mid-line still reads its whole lines', () => {
  const files = new PodLogFiles(tmp());
  const s = files.open('minecraft', 'p-3', 'ab', 'files', 0)!;
  s.write(line(5_000_000_000n, 'whole\n'));
  s.close();
  const pod = files.dirOf('minecraft', 'p-3', 'ab');
  appendFileSync(join(pod, 'files', '0.log'), '2025-12-01T04:00:00.000000000Z stdout F tor');
  assert.deepEqual(
    files.read(pod, 'files', false)!.map((l) => l.data.toString()),
    ['whole\n'],
  );
});
