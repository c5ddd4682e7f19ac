/**
 * `npm run bench [-- --json] [-- --ops N]`: the sync path on the embedded cluster, where each Pod is
 * unscheduled for 50–500 ms and then ContainerCreating for 300–2500 ms, drawn with a fixed seed.
 * Every strategy runs the same fast op (a small read) on the same draws, interleaved, and we report
 * per strategy the median overhead beyond (Pod start + program run) and the median API requests.
 */
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startCluster } from '../cluster/index.ts';
import { buildJobProgram } from '../scripts/build.ts';
import { renderFilesJob } from '../lib/job-spec/render.ts';
import { newOpId } from '../lib/files/editor.ts';
import { KubeJobPodApi } from '../lib/kube/job-pods.ts';
import { SyncRunner } from '../lib/runner/sync-runner.ts';
import { parseResultPayload } from '../lib/protocol/result-parse.ts';
import { LABEL_FILES_OP } from '../lib/labels.ts';
import { felis150Strategy, seedStrategy, type Strategy } from './peer-strategies.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const argv = process.argv.slice(2);
const asJson = argv.includes('--json');
const opsArg = argv.indexOf('--ops');
const N = opsArg >= 0 ? Number(argv[opsArg + 1]) : 30;

/** mulberry32: a small seeded PRNG, so every run draws the same Pod timings. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

await buildJobProgram();
const dataDir = mkdtempSync(join(tmpdir(), 'felis-bench-'));
mkdirSync(join(dataDir, 'worlds', 'bench'), { recursive: true });
writeFileSync(join(dataDir, 'worlds', 'bench', 'motd.txt'), 'hello from the bench\n');

const rand = prng(20261129);
const draws = Array.from({ length: N }, () => ({ unscheduledMs: 50 + 450 * rand(), creatingMs: 300 + 2200 * rand() }));
const timingByOp = new Map<string, { unscheduledMs: number; creatingMs: number }>();

const cluster = await startCluster({
  dataDir,
  rbacManifest: join(root, 'knative/rbac.yaml'),
  podTiming: (pod) => timingByOp.get(pod.metadata?.labels?.[LABEL_FILES_OP] ?? '') ?? { unscheduledMs: 0, creatingMs: 0 },
});
const user = 'system:serviceaccount:minecraft:felis-world';
const api = new KubeJobPodApi(cluster.kubeConfig(cluster.tokenFor('minecraft', 'felis-world')));
const admin = cluster.kubeConfig(cluster.adminToken);
await admin
  .makeApiClient((await import('@kubernetes/client-node')).CoreV1Api)
  .createNamespacedPersistentVolumeClaim({
    namespace: 'minecraft',
    body: { metadata: { name: 'world-bench-0' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
  });

const ours = new SyncRunner(api);
const strategies: Record<string, Strategy> = {
  sync: (a, job, mutating) => ours.run(job, { mutating, signal: AbortSignal.timeout(90_000) }),
  seed: seedStrategy,
  felis150: felis150Strategy,
};
const results: Record<string, { overhead: number[]; requests: number[] }> = {};
for (const name of Object.keys(strategies)) results[name] = { overhead: [], requests: [] };

const requestsOf = (c: Record<string, number>) => Object.values(c).reduce((a, b) => a + b, 0);

try {
  for (let i = 0; i < N; i++) {
    for (const [name, run] of Object.entries(strategies)) {
      const opId = newOpId();
      timingByOp.set(opId, draws[i]!);
      const job = renderFilesJob({
        namespace: 'minecraft',
        server: 'bench',
        opId,
        op: 'read',
        path: 'motd.txt',
        worldPvc: 'world-bench-0',
        image: 'felis-world/files:dev',
        command: ['/usr/local/bin/felis', 'files'],
        serviceAccount: 'felis-restore',
        worldsRoot: '/data',
        deadlineSeconds: 120,
        ttlSeconds: 120,
      });
      cluster.resetCounts();
      const t0 = performance.now();
      const payload = await run(api, job, false);
      const t1 = performance.now();
      const r = parseResultPayload(payload);
      if (r.code || !r.content) throw new Error(`bench read failed: ${payload}`);
      const rec = cluster.podRecord(opId);
      if (!rec?.started || !rec.exited) throw new Error(`no pod record for ${opId}`);
      // What no runner can avoid: from the Job's creation to the program's exit.
      const unavoidable = rec.exited - rec.jobCreated;
      results[name]!.overhead.push(t1 - t0 - unavoidable);
      results[name]!.requests.push(requestsOf(cluster.counts(user)));
      if (!asJson) process.stderr.write('.');
    }
  }
} finally {
  await cluster.close();
  rmSync(dataDir, { recursive: true, force: true });
}

const out: Record<string, number> = {};
for (const [name, r] of Object.entries(results)) {
  out[`${name}_overhead_ms_p50`] = Math.round(median(r.overhead) * 10) / 10;
  out[`${name}_api_requests_p50`] = median(r.requests);
}
if (asJson) {
  console.log(JSON.stringify(out));
} else {
  process.stderr.write('\n');
  console.log(`sync path, ${N} reads per strategy, same seeded Pod timings (unscheduled 50–500 ms, creating 300–2500 ms)\n`);
  console.log('| strategy | median overhead (ms) | median API requests |');
  console.log('| --- | ---: | ---: |');
  for (const name of Object.keys(results)) {
    console.log(`| ${name} | ${out[`${name}_overhead_ms_p50`]} | ${out[`${name}_api_requests_p50`]} |`);
  }
}
