/**
 * `node bench/cold-start.bench.ts [--json] [--runs N]`: how fast a function woken from zero serves.
 * For every function bundle in dist/functions, N fresh processes (default 10), interleaved across
 * functions, each measured from spawn to the first 200 on /healthz and to the end of its first real
 * request against the embedded cluster (file functions run their Job); then the same request again
 * in the same process (the warm cost: the request's own API round trips and Job). The floor is a
 * bare Hono hello-world bundled the same way, started the same way. The cluster runs in this
 * process; each function runs in its own.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { startCluster } from '../cluster/index.ts';
import { buildAll, common } from '../scripts/build.ts';
import { seedDemoWorld } from '../scripts/demo-world.ts';
import { createServer, STOPPED } from '../test/support/servers.ts';
import { bundleWeight } from './bundle-size.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const argv = process.argv.slice(2);
const asJson = argv.includes('--json');
const runsArg = argv.indexOf('--runs');
const RUNS = runsArg >= 0 ? Number(argv[runsArg + 1]) : 10;
// `--also <label>=<dir>`: other builds of the same functions (e.g. an option being weighed), measured
// in the same run, interleaved, so a busy machine skews every variant alike. Rows only, no JSON keys.
// `--also-cc <label>=<dir>`: the same with Node's compile cache (NODE_COMPILE_CACHE), which the
// variant's first process fills.
const also = argv.flatMap((a, i) =>
  a === '--also' || a === '--also-cc' ? [[...(argv[i + 1]!.split('=') as [string, string]), a === '--also-cc'] as const] : [],
);
const TOKEN = 'bench-token-0123456789';
const SERVER = 'survival';

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const r1 = (x: number) => Math.round(x * 10) / 10;

interface Op {
  method: string;
  path: string;
  body?: unknown;
}
const sha = async (s: string) => Buffer.from(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(s))).toString('hex');
const writeBody = async (text: string) => ({ content: Buffer.from(text).toString('base64'), content_sha256: await sha(text) });

/** A real request per function; `n` makes mutations unique so the cold and warm calls do the same work. */
function opFor(fn: string, n: string, world: string): () => Promise<Op> {
  const base = `/api/v1/servers/${SERVER}`;
  switch (fn) {
    case 'holder':
      return async () => ({ method: 'GET', path: `${base}/holder` });
    case 'files-list':
      return async () => ({ method: 'GET', path: `${base}/files?path=config` });
    case 'files-read':
      return async () => ({ method: 'GET', path: `${base}/file?path=server.properties` });
    case 'files-write':
      return async () => ({ method: 'PUT', path: `${base}/file?path=${encodeURIComponent(`bench-w-${n}-${Math.random().toString(36).slice(2)}.txt`)}`, body: await writeBody('hi\n') });
    case 'files-mkdir':
      return async () => ({ method: 'POST', path: `${base}/files/mkdir?path=${encodeURIComponent(`bench-d-${n}-${Math.random().toString(36).slice(2)}`)}` });
    case 'files-delete':
      return async () => {
        const f = `bench-x-${n}-${Math.random().toString(36).slice(2)}.txt`;
        writeFileSync(join(world, f), 'bye\n');
        return { method: 'DELETE', path: `${base}/file?path=${encodeURIComponent(f)}` };
      };
    case 'files-rename':
      return async () => {
        const f = `bench-r-${n}-${Math.random().toString(36).slice(2)}.txt`;
        writeFileSync(join(world, f), 'moving\n');
        return { method: 'POST', path: `${base}/files/rename?path=${encodeURIComponent(f)}`, body: { to: `${f}.moved` } };
      };
    case 'files-ops':
      return async () => ({ method: 'GET', path: `${base}/files/ops` });
    // A background start answers 202 once its Job exists (or 409 while the previous one still holds the world).
    case 'files-unzip':
      return async () => ({ method: 'POST', path: `${base}/files/unzip?path=${encodeURIComponent(`bench-u-${n}.zip`)}`, body: { overwrite: false } });
    case 'files-zip':
      return async () => ({ method: 'POST', path: `${base}/files/zip?path=eula.txt`, body: { name: `bench-z-${n}-${Math.random().toString(36).slice(2)}.zip` } });
    case 'start':
      // The server is stopped: stopping it again is a real, repeatable answer.
      return async () => ({ method: 'POST', path: `${base}/stop` });
    case 'world-lock':
      return async () => ({ method: 'DELETE', path: `${base}/lock` });
    case 'settle':
      return async () => ({ method: 'POST', path: '/api/v1/restore-chains/settle' });
    default:
      throw new Error(`no bench request for function ${fn}`);
  }
}

interface Sample {
  healthzMs: number;
  firstOpMs?: number;
  warmOpMs?: number;
  status?: number;
}

async function coldStart(bundle: string, env: NodeJS.ProcessEnv, op?: () => Promise<Op>): Promise<Sample> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [bundle], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stderr.on('data', (d) => (out += d));
  try {
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${bundle}: no port line in 15 s: ${out}`)), 15_000);
      child.once('exit', (code) => reject(new Error(`${bundle} exited ${code}: ${out}`)));
      child.stdout.on('data', (d: Buffer) => {
        out += d;
        const m = /"port":(\d+)/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(Number(m[1]));
        }
      });
    });
    const url = `http://127.0.0.1:${port}`;
    const h = await fetch(`${url}/healthz`);
    await h.arrayBuffer();
    if (h.status !== 200) throw new Error(`${bundle}: /healthz ${h.status}`);
    const healthzMs = performance.now() - t0;
    if (!op) return { healthzMs };
    const call = async () => {
      const o = await op();
      const res = await fetch(url + o.path, {
        method: o.method,
        headers: { authorization: `Bearer ${TOKEN}`, ...(o.body ? { 'content-type': 'application/json' } : {}) },
        body: o.body ? JSON.stringify(o.body) : undefined,
        signal: AbortSignal.timeout(30_000),
      });
      const text = await res.text();
      // A caller's mistake or a server error would measure the wrong path.
      if (res.status >= 500 || res.status === 401 || res.status === 400 || res.status === 404) await new Promise((r) => setTimeout(r, 300));
      if (res.status >= 500 || res.status === 401 || res.status === 400 || res.status === 404) throw new Error(`${bundle} ${o.method} ${o.path}: ${res.status} ${text}\n${out.slice(-3000)}`);
      return res.status;
    };
    // The op's own preparation (a file written for delete) is outside neither measurement's noise.
    const status = await call();
    const firstOpMs = performance.now() - t0;
    const tw = performance.now();
    await call();
    return { healthzMs, firstOpMs, warmOpMs: performance.now() - tw, status };
  } finally {
    child.kill('SIGTERM');
    if (child.exitCode === null && child.signalCode === null) await once(child, 'exit');
  }
}

const t = performance.now();
await buildAll();
const fnDir = join(root, 'dist/functions');
const functions = readdirSync(fnDir)
  .filter((f) => f.endsWith('.mjs'))
  .map((f) => f.slice(0, -4))
  .sort();
const dataDir = mkdtempSync(join(tmpdir(), 'felis-cold-'));
const floorBundle = join(dataDir, 'hono-floor.mjs');
await build({ ...common, entryPoints: [join(root, 'bench/hono-floor.ts')], outfile: floorBundle, minify: true });

const world = seedDemoWorld(dataDir, SERVER);
const cluster = await startCluster({ dataDir, rbacManifest: join(root, 'knative/rbac.yaml') });
const results: Record<string, Sample[]> = { 'hono-floor': [] };
try {
  await createServer(cluster, SERVER, STOPPED);
  const kubeconfig = join(dataDir, 'function.kubeconfig');
  writeFileSync(kubeconfig, cluster.kubeconfigYaml(cluster.tokenFor('minecraft', 'felis-world')));
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    KUBECONFIG: kubeconfig,
    PORT: '0',
    HOST: '127.0.0.1',
    FELIS_TOKEN: TOKEN,
    FELIS_IMAGE: 'felis-world/files:dev',
    ...(process.env.NODE_COMPILE_CACHE ? { NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE } : {}),
  };
  for (const fn of functions) results[fn] = [];
  for (const [label] of also) for (const fn of functions) results[`${fn} (${label})`] = [];
  for (let i = 0; i < RUNS; i++) {
    results['hono-floor']!.push(await coldStart(floorBundle, env));
    for (const fn of functions) {
      results[fn]!.push(await coldStart(join(fnDir, `${fn}.mjs`), env, opFor(fn, String(i), world)));
      for (const [label, dir, cc] of also) {
        const e = cc ? { ...env, NODE_COMPILE_CACHE: join(dataDir, `compile-cache-${label}`) } : env;
        results[`${fn} (${label})`]!.push(await coldStart(join(dir, `${fn}.mjs`), e, opFor(fn, `${label}-${i}`, world)));
      }
    }
    if (!asJson) process.stderr.write('.');
  }
} finally {
  await cluster.close();
  rmSync(dataDir, { recursive: true, force: true });
}

const floor = median(results['hono-floor']!.map((s) => s.healthzMs));
const rows = functions.map((fn) => {
  const s = results[fn]!;
  const w = bundleWeight(join(fnDir, `${fn}.mjs`));
  return {
    fn,
    startupKiB: w.startupBytes / 1024,
    totalKiB: w.totalBytes / 1024,
    healthz: median(s.map((x) => x.healthzMs)),
    firstOp: median(s.map((x) => x.firstOpMs!)),
    warmOp: median(s.map((x) => x.warmOpMs!)),
    status: s[0]!.status!,
  };
});
const worst = (k: 'healthz' | 'firstOp') => rows.reduce((a, b) => (b[k] > a[k] ? b : a));
const out = {
  bundle_kib_max: r1(Math.max(...rows.map((r) => r.totalKiB))),
  bundle_startup_kib_max: r1(Math.max(...rows.map((r) => r.startupKiB))),
  cold_start_healthz_ms_p50_worst: r1(worst('healthz').healthz),
  cold_start_first_op_ms_p50_worst: r1(worst('firstOp').firstOp),
  cold_start_ms_p50_hono_floor: r1(floor),
  // The first op beyond what the same request costs warm, for the function where that is largest.
  cold_start_first_op_extra_ms_p50_worst: r1(Math.max(...rows.map((r) => r.firstOp - r.warmOp))),
};
if (asJson) {
  console.log(JSON.stringify(out));
} else {
  process.stderr.write('\n');
  console.log(`cold start, ${RUNS} fresh processes per function, p50 ms from spawn (bundles built in ${Math.round(performance.now() - t)} ms total run)\n`);
  console.log('| function | start-up KiB | total KiB | /healthz | first request | same request warm | first − warm | status |');
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  console.log(`| bare Hono (floor) | | | ${r1(floor)} | | | | |`);
  for (const [label, dir] of also) {
    for (const fn of functions) {
      const x = results[`${fn} (${label})`]!;
      const w = bundleWeight(join(dir, `${fn}.mjs`));
      const [h, f, wo] = [median(x.map((v) => v.healthzMs)), median(x.map((v) => v.firstOpMs!)), median(x.map((v) => v.warmOpMs!))];
      rows.push({ fn: `${fn} (${label})`, startupKiB: w.startupBytes / 1024, totalKiB: w.totalBytes / 1024, healthz: h, firstOp: f, warmOp: wo, status: x[0]!.status! });
    }
  }
  for (const r of rows) {
    console.log(`| ${r.fn} | ${r1(r.startupKiB)} | ${r1(r.totalKiB)} | ${r1(r.healthz)} | ${r1(r.firstOp)} | ${r1(r.warmOp)} | ${r1(r.firstOp - r.warmOp)} | ${r.status} |`);
  }
  console.log('\n' + JSON.stringify(out));
}
