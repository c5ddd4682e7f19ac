/**
 * `npm run bench [-- --json] [-- --ops N]`: the sync path on the embedded cluster, where each Pod is
 * unscheduled for 50–500 ms and then ContainerCreating for 300–2500 ms, drawn with a fixed seed.
 * Every strategy runs the same fast op (a small read) on the same draws, interleaved; we report per
 * strategy the median overhead beyond (Pod start + program run) — the time from sending the Job to
 * having the result, minus the time from the Job's arrival until the program printed its result —
 * its 90th percentile, and the median number of Kubernetes API requests. `sync` is one runner
 * instance for all ops (it learns Pod start times), `sync_cold` a new one for every op. The cluster runs in a process of its own.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { CoreV1Api } from '@kubernetes/client-node';
import { tokenKubeConfig } from '../cluster/kubeconfig.ts';
import { newOpId } from '../lib/files/editor.ts';
import { renderFilesJob } from '../lib/job-spec/render.ts';
import { KubeJobPodApi } from '../lib/kube/job-pods.ts';
import { LABEL_FILES_OP } from '../lib/labels.ts';
import { RESULT_PREFIX } from '../lib/protocol/result.ts';
import { parseResultPayload } from '../lib/protocol/result-parse.ts';
import { SyncRunner } from '../lib/runner/sync-runner.ts';
import { buildJobProgram } from '../scripts/build.ts';
import { felis150Strategy, type Strategy, seedStrategy } from './peer-strategies.ts';
import { median, numberArg, prng, quantile } from './support.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const argv = process.argv.slice(2);
const asJson = argv.includes('--json');
const N = numberArg(argv, '--ops', 40);
const USER = 'system:serviceaccount:minecraft:felis-world';

await buildJobProgram();
const dataDir = mkdtempSync(join(tmpdir(), 'felis-bench-'));
mkdirSync(join(dataDir, 'worlds', 'bench'), { recursive: true });
writeFileSync(join(dataDir, 'worlds', 'bench', 'motd.txt'), 'hello from the bench\n');

const child = spawn(process.execPath, [join(root, 'bench/cluster-process.ts'), dataDir], { stdio: ['pipe', 'pipe', 'inherit'] });
const info = await new Promise<{ url: string; caPem: string; control: string; adminToken: string; functionToken: string }>((resolve, reject) => {
  createInterface({ input: child.stdout }).once('line', (l) => resolve(JSON.parse(l)));
  child.once('exit', (code) => reject(new Error(`cluster process exited ${code}`)));
});
const control = async (path: string, body?: unknown) => (await fetch(info.control + path, body === undefined ? {} : { method: 'POST', body: JSON.stringify(body) })).json() as Promise<any>;

const api = new KubeJobPodApi(tokenKubeConfig(info.url, info.functionToken, 'bench', 'minecraft', info.caPem));
const admin = tokenKubeConfig(info.url, info.adminToken, 'bench-admin', 'minecraft', info.caPem).makeApiClient(CoreV1Api);
await admin.createNamespacedPersistentVolumeClaim({
  namespace: 'minecraft',
  body: { metadata: { name: 'world-bench-0' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
});

/** When the kubelet received the result line (its own line timestamp), as epoch milliseconds. */
async function resultPrintedAt(opId: string): Promise<number> {
  const pods = await admin.listNamespacedPod({ namespace: 'minecraft', labelSelector: `${LABEL_FILES_OP}=${opId}` });
  const log = await admin.readNamespacedPodLog({ namespace: 'minecraft', name: pods.items[0]!.metadata!.name!, container: 'files', timestamps: true });
  const line = log.split('\n').find((l) => l.includes(' ' + RESULT_PREFIX));
  if (!line) throw new Error(`no result line for ${opId}`);
  const m = /^(\S+T\d\d:\d\d:\d\d)(?:\.(\d+))?Z /.exec(line)!;
  return Date.parse(m[1] + 'Z') + Number(`0.${m[2] ?? '0'}`) * 1000;
}

const rand = prng(20261129);
const draws = Array.from({ length: N }, () => ({ unscheduledMs: 50 + 450 * rand(), creatingMs: 300 + 2200 * rand() }));
// `sync` is one warm instance, learning from the starts it sees; `sync_cold` is a new instance
// per op (scaled to zero in between), with nothing learned.
const ours = new SyncRunner(api);
const strategies: Record<string, Strategy> = {
  sync: (_a, job, mutating) => ours.run(job, { mutating, signal: AbortSignal.timeout(90_000) }),
  sync_cold: (_a, job, mutating) => new SyncRunner(api).run(job, { mutating, signal: AbortSignal.timeout(90_000) }),
  seed: seedStrategy,
  felis150: felis150Strategy,
};
// `run`: from the container's start to its result line, the window a look must fall in.
const results: Record<string, { overhead: number[]; requests: number[]; run: number[] }> = {};
for (const name of Object.keys(strategies)) results[name] = { overhead: [], requests: [], run: [] };

try {
  for (let i = 0; i < N; i++) {
    for (const [name, run] of Object.entries(strategies)) {
      const opId = newOpId();
      await control('/timing', { opId, ...draws[i]! });
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
      await control('/reset', {});
      const start = performance.now();
      const payload = await run(api, job, false);
      const elapsed = performance.now() - start;
      const requests = Object.values((await control(`/counts?user=${encodeURIComponent(USER)}`)) as Record<string, number>).reduce((a, b) => a + b, 0);
      const r = parseResultPayload(payload);
      if (r.code || !r.content) throw new Error(`bench read failed: ${payload}`);
      const rec = (await control(`/record?op=${opId}`)) as { jobCreated: number; started: number } | null;
      if (!rec) throw new Error(`no pod record for ${opId}`);
      // Unavoidable: from the Job's arrival at the API server until the program printed its result.
      const printed = await resultPrintedAt(opId);
      const unavoidable = printed - rec.jobCreated;
      results[name]!.run.push(printed - rec.started);
      results[name]!.overhead.push(elapsed - unavoidable);
      results[name]!.requests.push(requests);
      if (!asJson) process.stderr.write('.');
    }
  }
} finally {
  child.stdin.end();
  await new Promise((r) => child.once('exit', r));
  rmSync(dataDir, { recursive: true, force: true });
}

const out: Record<string, number> = {};
for (const [name, r] of Object.entries(results)) {
  out[`${name}_overhead_ms_p50`] = Math.round(median(r.overhead) * 10) / 10;
  out[`${name}_overhead_ms_p90`] = Math.round(quantile(r.overhead, 0.9));
  out[`${name}_api_requests_p50`] = median(r.requests);
}
if (process.env.BENCH_DEBUG) {
  for (const [n, r] of Object.entries(results))
    console.error(n, r.overhead.map((x) => Math.round(x)).join(' '), '\n   requests', r.requests.join(' '), '\n   start to result', r.run.map((x) => Math.round(x)).join(' '));
}
if (asJson) {
  console.log(JSON.stringify(out));
} else {
  process.stderr.write('\n');
  console.log(`sync path, ${N} reads per strategy, same seeded Pod timings (unscheduled 50–500 ms, creating 300–2500 ms)\n`);
  console.log('| strategy | median overhead (ms) | p90 overhead (ms) | median API requests |');
  console.log('| --- | ---: | ---: | ---: |');
  for (const name of Object.keys(results)) {
    console.log(`| ${name} | ${out[`${name}_overhead_ms_p50`]} | ${out[`${name}_overhead_ms_p90`]} | ${out[`${name}_api_requests_p50`]} |`);
  }
}
