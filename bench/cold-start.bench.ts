/**
 * `node bench/cold-start.bench.ts [--json] [--runs N] [--compare]`: how fast a function woken from
 * zero serves. For every function bundle in dist/functions, N fresh processes (default 10),
 * interleaved across functions, each measured from spawn to the first 200 on /healthz and to the
 * end of its first real request against the embedded cluster (file functions run their Job); then
 * the same request again in the same process (the warm cost: the request's own API round trips and
 * Job). The floor is a bare Hono hello-world bundled the same way, started the same way.
 *
 * Everything runs as the image runs it: with Node's compile cache, filled beforehand by the
 * image's own warm-up (scripts/image-compile-cache.ts); the floor's cache by one uncounted start.
 * `--compare` also measures the functions and the floor without a compile cache, interleaved.
 * The cluster runs in this process; each function runs in its own.
 *
 * Each round also imports the Kubernetes client's chunk (client-node with undici) alone in a fresh
 * process with its own compile cache: what loading it costs every function before its first
 * request can be answered, whatever the request is (`cold_start_client_load_*`).
 */

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { startCluster } from '../cluster/index.ts';
import { ensureJobKeyFile } from '../lib/browse/key-file.ts';
import { ROUTES } from '../lib/http/routes/table.ts';
import { buildAll, common } from '../scripts/build.ts';
import { seedDemoWorld } from '../scripts/demo-world.ts';
import { warmImage } from '../scripts/image-compile-cache.ts';
import { createServer, STOPPED } from '../test/support/servers.ts';
import { bundleWeight } from './bundle-size.ts';
import { median, numberArg } from './support.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const argv = process.argv.slice(2);
const asJson = argv.includes('--json');
const RUNS = numberArg(argv, '--runs', 10);
const compare = argv.includes('--compare');
// `--also <label>=<dir>`: other builds of the same functions (e.g. an option being weighed), measured
// in the same run, interleaved, so a busy machine skews every variant alike. Rows only, no JSON keys.
// `--also-cc <label>=<dir>`: the same with a compile cache of its own, which the variant's first
// process fills.
const also = argv.flatMap((a, i) => (a === '--also' || a === '--also-cc' ? [[...(argv[i + 1]!.split('=') as [string, string]), a === '--also-cc'] as const] : []));
// `--also-flags <label>=<node flags>`: these bundles started with other Node flags (space-separated),
// with a compile cache of their own (V8 rejects a cache made under other flags).
const alsoFlags = argv.flatMap((a, i) => {
  if (a !== '--also-flags') return [];
  const [label, flags] = argv[i + 1]!.split(/=(.*)/s) as [string, string];
  return [[label, flags.split(' ').filter(Boolean)] as const];
});
const TOKEN = 'bench-token-0123456789';
const SERVER = 'survival';

const r1 = (x: number) => Math.round(x * 10) / 10;

interface Op {
  method: string;
  path: string;
  body?: unknown;
  /** A raw body with its own headers (an upload), instead of JSON. */
  raw?: { bytes: Buffer; headers: Record<string, string> };
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
    case 'files-search':
      return async () => ({ method: 'GET', path: `${base}/files/search?q=${encodeURIComponent('*.yml')}` });
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
    case 'files-batch':
      return async () => {
        const f = `bench-b-${n}-${Math.random().toString(36).slice(2)}.txt`;
        writeFileSync(join(world, f), 'bye\n');
        return { method: 'POST', path: `${base}/files/delete`, body: { paths: [f] } };
      };
    case 'files-ops':
      return async () => ({ method: 'GET', path: `${base}/files/ops` });
    // The undo trash's listing: one read-only Job.
    case 'files-trash':
      return async () => ({ method: 'GET', path: `${base}/files/trash` });
    // Signing a download URL: the gates and an HMAC, no Job (the GET on it is the download bench's).
    case 'files-download':
      return async () => ({ method: 'POST', path: `${base}/files/download?path=eula.txt` });
    // Beginning a session creates its receiver Job and waits for it to answer. The bench's sessions
    // idle out after 1 s (FELIS_UPLOAD_IDLE_SECONDS below); the warm call meets the first's session
    // and is refused 429 (one session per server).
    case 'files-uploads':
      return async () => ({ method: 'POST', path: `${base}/files/uploads?path=${encodeURIComponent(`bench-s-${n}.bin`)}`, body: { size: 1 } });
    case 'files-upload':
      return async () => {
        const bytes = Buffer.from(`uploaded ${n}\n`);
        const digest = Buffer.from(await crypto.subtle.digest('SHA-256', bytes)).toString('base64');
        const path = `${base}/files/upload?path=${encodeURIComponent(`bench-up-${n}-${Math.random().toString(36).slice(2)}.txt`)}`;
        return { method: 'PUT', path, raw: { bytes, headers: { 'content-digest': `sha-256=:${digest}:` } } };
      };
    // A background start answers 202 once its Job exists (or 409 while the previous one still holds the world).
    case 'files-unzip':
      return async () => ({ method: 'POST', path: `${base}/files/unzip?path=${encodeURIComponent(`bench-u-${n}.zip`)}`, body: { overwrite: false } });
    case 'files-zip':
      return async () => ({ method: 'POST', path: `${base}/files/zip?path=eula.txt`, body: { name: `bench-z-${n}-${Math.random().toString(36).slice(2)}.zip` } });
    // A pull of a documentation address (TEST-NET-1): 202 once its Job exists; the Job's guard refuses it before any packet leaves.
    case 'files-pull':
      return async () => ({ method: 'POST', path: `${base}/files/pull`, body: { url: `http://192.0.2.1/bench-${n}.jar`, path: '' } });
    case 'files-compress':
      return async () => ({ method: 'POST', path: `${base}/files/compress`, body: { paths: ['eula.txt'], format: 'tar.gz', name: `bench-t-${n}-${Math.random().toString(36).slice(2)}.tar.gz` } });
    // A small file's copy: one sync Job, answered 200 with the copy's digest.
    case 'files-copy':
      return async () => ({ method: 'POST', path: `${base}/files/copy?path=eula.txt`, body: { to: `bench-c-${n}-${Math.random().toString(36).slice(2)}.txt` } });
    case 'start':
      // The server is stopped: stopping it again is a real, repeatable answer.
      return async () => ({ method: 'POST', path: `${base}/stop` });
    case 'world-lock':
      return async () => ({ method: 'DELETE', path: `${base}/lock` });
    case 'settle':
      return async () => ({ method: 'POST', path: '/api/v1/restore-chains/settle' });
    default: {
      // A function with no request of its own here: its first GET under a server that takes no
      // other path parameter (a read, repeatable as is), from the route table.
      const under = '/api/v1/servers/:name/';
      const read = Object.values(ROUTES).find((r) => r.fn === fn && r.method === 'GET' && r.path.startsWith(under) && !r.path.slice(under.length).includes(':'));
      if (!read) throw new Error(`no bench request for function ${fn}: give it one in opFor`);
      return async () => ({ method: 'GET', path: read.path.replace(':name', SERVER) });
    }
  }
}

interface Sample {
  healthzMs: number;
  firstOpMs?: number;
  warmOpMs?: number;
  /** CPU the function's process used (user + system, all its threads) to the same points. */
  healthzCpu?: number;
  firstOpCpu?: number;
  warmOpCpu?: number;
  status?: number;
}

/**
 * CPU ms a process has used so far (Linux: /proc/<pid>/stat, 10 ms ticks); undefined elsewhere.
 * Unlike wall time it hardly depends on what else the machine runs, so the bench reports both.
 */
function cpuMs(pid: number | undefined): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
  } catch {
    return undefined;
  }
}

/**
 * Imports one chunk in a fresh process (with `env`'s compile cache) and reads the import's own wall
 * and CPU time inside it: the client chunk's load, without a server or a request around it.
 */
async function importAlone(chunk: string, env: NodeJS.ProcessEnv): Promise<{ ms: number; cpu: number }> {
  const script = `const c = process.cpuUsage(), t = performance.now();
await import(${JSON.stringify(pathToFileURL(chunk).href)});
const u = process.cpuUsage(c);
console.log(JSON.stringify({ ms: performance.now() - t, cpu: (u.user + u.system) / 1000 }));`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`importing ${chunk} alone exited ${code}`);
  return JSON.parse(out) as { ms: number; cpu: number };
}

async function coldStart(bundle: string, env: NodeJS.ProcessEnv, op?: () => Promise<Op>, flags: readonly string[] = []): Promise<Sample> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [...flags, bundle], { env, stdio: ['ignore', 'pipe', 'pipe'] });
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
    const healthzCpu = cpuMs(child.pid);
    if (!op) return { healthzMs, healthzCpu };
    const call = async () => {
      const o = await op();
      const res = await fetch(url + o.path, {
        method: o.method,
        headers: { authorization: `Bearer ${TOKEN}`, ...(o.body ? { 'content-type': 'application/json' } : {}), ...o.raw?.headers },
        body: o.raw ? o.raw.bytes : o.body ? JSON.stringify(o.body) : undefined,
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
    const firstOpCpu = cpuMs(child.pid);
    const tw = performance.now();
    await call();
    const warmOpMs = performance.now() - tw;
    const after = cpuMs(child.pid);
    return { healthzMs, firstOpMs, warmOpMs, healthzCpu, firstOpCpu, warmOpCpu: after !== undefined && firstOpCpu !== undefined ? after - firstOpCpu : undefined, status };
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
const NO_CACHE = 'no compile cache';
const FLOOR = 'hono-floor';

const world = seedDemoWorld(dataDir, SERVER);
const cluster = await startCluster({ dataDir, rbacManifest: join(root, 'knative/rbac.yaml') });
const results: Record<string, Sample[]> = { [FLOOR]: [], [`${FLOOR} (${NO_CACHE})`]: [] };
// The chunk every function loads after its probe: client-node and undici (lib/kube/client-parts.ts).
const clientChunk = readdirSync(join(fnDir, 'chunks')).find((f) => /^client-parts-.*\.mjs$/.test(f));
if (!clientChunk) throw new Error('no client-parts chunk in dist/functions/chunks');
const clientLoads: { ms: number; cpu: number }[] = [];
try {
  await createServer(cluster, SERVER, STOPPED);
  const kubeconfig = join(dataDir, 'function.kubeconfig');
  writeFileSync(kubeconfig, cluster.kubeconfigYaml(cluster.tokenFor('minecraft', 'felis-world')));
  const plain: NodeJS.ProcessEnv = {
    // This Node first: the Job program's `#!/usr/bin/env node` must find it, as in the image.
    PATH: `${dirname(process.execPath)}:${process.env.PATH}`,
    KUBECONFIG: kubeconfig,
    PORT: '0',
    HOST: '127.0.0.1',
    FELIS_TOKEN: TOKEN,
    FELIS_IMAGE: 'felis-world/files:dev',
  };
  // The image's compile cache, filled the way the image build fills it.
  // Downloads and uploads need the job key (their Jobs' tokens derive from it, as their manifests
  // mount it); list and read keep measuring their one-shot path without it. The bench's upload
  // sessions idle out after 1 s.
  const jobKey = ensureJobKeyFile(dataDir);
  const keyed = (fn: string, e: NodeJS.ProcessEnv): NodeJS.ProcessEnv =>
    fn === 'files-download' ? { ...e, FELIS_JOB_KEY_FILE: jobKey } : fn.startsWith('files-upload') ? { ...e, FELIS_JOB_KEY_FILE: jobKey, FELIS_UPLOAD_IDLE_SECONDS: '1' } : e;
  const env: NodeJS.ProcessEnv = { ...plain, NODE_COMPILE_CACHE: join(dataDir, 'compile-cache') };
  await warmImage(fnDir, join(root, 'dist/felis.mjs'), env);
  await coldStart(floorBundle, env);
  for (const fn of functions) results[fn] = [];
  const variants = [
    ...(compare ? [{ label: NO_CACHE, dir: fnDir, flags: [] as readonly string[], env: plain }] : []),
    ...also.map(([label, dir, cc]) => ({ label, dir, flags: [] as readonly string[], env: cc ? { ...plain, NODE_COMPILE_CACHE: join(dataDir, `compile-cache-${label}`) } : plain })),
    ...alsoFlags.map(([label, flags]) => ({ label, dir: fnDir, flags, env: { ...plain, NODE_COMPILE_CACHE: join(dataDir, `compile-cache-${label}`) } as NodeJS.ProcessEnv })),
  ];
  // A variant built before a function existed has no bundle of it: that function is left out of its rows.
  const has = (dir: string, fn: string) => existsSync(join(dir, `${fn}.mjs`));
  for (const v of variants) for (const fn of functions) if (has(v.dir, fn)) results[`${fn} (${v.label})`] = [];
  // A flags variant's compile cache is filled the way the image's is: one uncounted start of each
  // function (with its first request) under those flags.
  for (const v of variants.filter((x) => x.flags.length > 0)) {
    for (const fn of functions) await coldStart(join(v.dir, `${fn}.mjs`), keyed(fn, v.env), opFor(fn, `warm-${v.label}`, world), v.flags);
  }
  const clientEnv = { ...plain, NODE_COMPILE_CACHE: join(dataDir, 'compile-cache-client-alone') };
  await importAlone(join(fnDir, 'chunks', clientChunk), clientEnv);
  for (let i = 0; i < RUNS; i++) {
    results[FLOOR]!.push(await coldStart(floorBundle, env));
    clientLoads.push(await importAlone(join(fnDir, 'chunks', clientChunk), clientEnv));
    if (compare) results[`${FLOOR} (${NO_CACHE})`]!.push(await coldStart(floorBundle, plain));
    for (const fn of functions) {
      results[fn]!.push(await coldStart(join(fnDir, `${fn}.mjs`), keyed(fn, env), opFor(fn, String(i), world)));
      for (const v of variants.filter((x) => has(x.dir, fn)))
        results[`${fn} (${v.label})`]!.push(await coldStart(join(v.dir, `${fn}.mjs`), keyed(fn, v.env), opFor(fn, `${v.label}-${i}`, world), v.flags));
    }
    if (!asJson) process.stderr.write('.');
  }
} finally {
  await cluster.close();
  rmSync(dataDir, { recursive: true, force: true });
}

const med = (xs: Sample[], k: keyof Sample) => {
  const v = xs.map((x) => x[k]).filter((n): n is number => n !== undefined);
  return v.length === xs.length ? median(v) : NaN;
};
const floor = med(results[FLOOR]!, 'healthzMs');
const floorCpu = med(results[FLOOR]!, 'healthzCpu');
const row = (label: string, dir: string, fn: string, s: Sample[]) => {
  const w = bundleWeight(join(dir, `${fn}.mjs`));
  return {
    fn: label,
    startupKiB: w.startupBytes / 1024,
    totalKiB: w.totalBytes / 1024,
    healthz: med(s, 'healthzMs'),
    firstOp: med(s, 'firstOpMs'),
    warmOp: med(s, 'warmOpMs'),
    healthzCpu: med(s, 'healthzCpu'),
    firstOpCpu: med(s, 'firstOpCpu'),
    warmOpCpu: med(s, 'warmOpCpu'),
    status: s[0]!.status!,
  };
};
const rows = functions.map((fn) => row(fn, fnDir, fn, results[fn]!));
type Row = (typeof rows)[number];
const worst = (k: 'healthz' | 'firstOp' | 'healthzCpu' | 'firstOpCpu') => rows.reduce((a, b) => (b[k] > a[k] ? b : a));
// A first request may take twice the floor plus what the same request costs warm (its own API
// round trips and Job); the function with the least room left names the budget. The same in CPU
// time of the function's process, which the load of a shared machine hardly moves.
const budget = (r: Row) => 2 * floor + r.warmOp;
const budgetCpu = (r: Row) => 2 * floorCpu + r.warmOpCpu;
const tightest = rows.reduce((a, b) => (b.firstOp - budget(b) > a.firstOp - budget(a) ? b : a));
const tightestCpu = rows.reduce((a, b) => (b.firstOpCpu - budgetCpu(b) > a.firstOpCpu - budgetCpu(a) ? b : a));
const out = {
  bundle_kib_max: r1(Math.max(...rows.map((r) => r.totalKiB))),
  bundle_startup_kib_max: r1(Math.max(...rows.map((r) => r.startupKiB))),
  cold_start_healthz_ms_p50_worst: r1(worst('healthz').healthz),
  cold_start_first_op_ms_p50_worst: r1(worst('firstOp').firstOp),
  cold_start_ms_p50_hono_floor: r1(floor),
  // The first op beyond what the same request costs warm, for the function where that is largest.
  cold_start_first_op_extra_ms_p50_worst: r1(Math.max(...rows.map((r) => r.firstOp - r.warmOp))),
  // 2 × floor + its warm cost, for the function whose first request comes closest to (or over) it.
  cold_start_first_op_ms_p50_budget_worst: r1(budget(tightest)),
  cold_start_first_op_ms_p50_budget_worst_measured: r1(tightest.firstOp),
  cold_start_healthz_cpu_ms_p50_worst: r1(worst('healthzCpu').healthzCpu),
  cold_start_first_op_cpu_ms_p50_worst: r1(worst('firstOpCpu').firstOpCpu),
  cold_start_cpu_ms_p50_hono_floor: r1(floorCpu),
  cold_start_first_op_cpu_ms_p50_budget_worst: r1(budgetCpu(tightestCpu)),
  cold_start_first_op_cpu_ms_p50_budget_worst_measured: r1(tightestCpu.firstOpCpu),
  // Importing the client chunk alone, which every function does before its first answer.
  cold_start_client_load_ms_p50: r1(median(clientLoads.map((l) => l.ms))),
  cold_start_client_load_cpu_ms_p50: r1(median(clientLoads.map((l) => l.cpu))),
};
if (asJson) {
  console.log(JSON.stringify(out));
} else {
  process.stderr.write('\n');
  console.log(`cold start, ${RUNS} fresh processes per function, p50 from spawn: wall ms, then CPU ms of the function's process (bench run ${Math.round(performance.now() - t)} ms)\n`);
  console.log('| function | start-up KiB | total KiB | /healthz | first request | same request warm | first − warm | CPU /healthz | CPU first | CPU warm | status |');
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  console.log(`| bare Hono (floor) | | | ${r1(floor)} | | | | ${r1(floorCpu)} | | | |`);
  const nc = results[`${FLOOR} (${NO_CACHE})`]!;
  if (compare) console.log(`| bare Hono (floor, ${NO_CACHE}) | | | ${r1(med(nc, 'healthzMs'))} | | | | ${r1(med(nc, 'healthzCpu'))} | | | |`);
  for (const label of [...(compare ? [NO_CACHE] : []), ...also.map(([l]) => l), ...alsoFlags.map(([l]) => l)]) {
    const dir = also.find(([l]) => l === label)?.[1] ?? fnDir;
    for (const fn of functions) if (results[`${fn} (${label})`]) rows.push(row(`${fn} (${label})`, dir, fn, results[`${fn} (${label})`]!));
  }
  for (const r of rows) {
    console.log(
      `| ${r.fn} | ${r1(r.startupKiB)} | ${r1(r.totalKiB)} | ${r1(r.healthz)} | ${r1(r.firstOp)} | ${r1(r.warmOp)} | ${r1(r.firstOp - r.warmOp)} | ${r1(r.healthzCpu)} | ${r1(r.firstOpCpu)} | ${r1(r.warmOpCpu)} | ${r.status} |`,
    );
  }
  // What the budget leaves between /healthz and the first answer (beyond the request's own warm
  // cost), beside what the client chunk alone takes to load in that stretch.
  const leftAfterHealthz = 2 * floor - median(rows.filter((r) => !r.fn.includes('(')).map((r) => r.healthz));
  console.log(
    `\nthe client chunk (client-node with undici) imported alone: ${out.cold_start_client_load_ms_p50} ms wall, ${out.cold_start_client_load_cpu_ms_p50} CPU ms (p50); ` +
      `the budget leaves ${r1(leftAfterHealthz)} ms between a function's /healthz (p50 over the functions) and its first answer, beyond the request's warm cost`,
  );
  console.log('\n' + JSON.stringify(out));
}
