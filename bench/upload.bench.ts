/**
 * `node bench/upload.bench.ts [--json] [--size-mib N]`: upload throughput end to end over HTTP,
 * against `cp` of the same file on the same disk. A file of N MiB (default 1024) goes through the
 * session routes of the files-uploads function (begin, 32 MiB parts streamed from the file,
 * commit) into a receiver Pod of the embedded cluster that writes it into the world volume; a
 * 64 MiB file goes through the single PUT of files-upload. Each is timed from the first request
 * to the last answer, each body piped from the file into the socket as curl would send it; the parts' digests are computed beforehand (a client hashes as it reads, so
 * that cost is the client's, not the service's). `cp` copies the same source into the same world
 * folder. Each function bundle runs in its own process, as a Knative instance would.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createReadStream, mkdtempSync, openSync, closeSync, readSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import http from 'node:http';
import { pipeline } from 'node:stream/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startCluster } from '../cluster/index.ts';
import { buildAll } from '../scripts/build.ts';
import { seedDemoWorld } from '../scripts/demo-world.ts';
import { createServer, STOPPED } from '../test/support/servers.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const argv = process.argv.slice(2);
const asJson = argv.includes('--json');
const sizeArg = argv.indexOf('--size-mib');
const SIZE = (sizeArg >= 0 ? Number(argv[sizeArg + 1]) : 1024) << 20;
const SINGLE = 64 << 20;
const PART = 32 << 20;
const TOKEN = 'bench-token-0123456789';
const BASE = '/api/v1/servers/survival';
const r1 = (x: number) => Math.round(x * 10) / 10;
const r3 = (x: number) => Math.round(x * 1000) / 1000;

async function startFunction(name: string, env: NodeJS.ProcessEnv): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [join(root, `dist/functions/${name}.mjs`)], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stderr!.on('data', (d) => (out += d));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name}: no port line in 15 s: ${out}`)), 15_000);
    child.once('exit', (code) => reject(new Error(`${name} exited ${code}: ${out}`)));
    child.stdout!.on('data', (d: Buffer) => {
      out += d;
      const m = /"port":(\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
  });
  return { url: `http://127.0.0.1:${port}`, child };
}

/** A file of `size` pseudo-random bytes (written in 8 MiB blocks). */
function makeFile(path: string, size: number): void {
  const fd = openSync(path, 'w');
  const block = randomBytes(8 << 20);
  for (let off = 0; off < size; off += block.length) {
    block.writeUInt32LE(off >>> 0, 0);
    writeSync(fd, block, 0, Math.min(block.length, size - off));
  }
  closeSync(fd);
}

function digestOf(path: string, start: number, length: number): string {
  const fd = openSync(path, 'r');
  const h = createHash('sha256');
  const buf = Buffer.allocUnsafe(1 << 20);
  for (let off = 0; off < length; ) {
    const n = readSync(fd, buf, 0, Math.min(buf.length, length - off), start + off);
    h.update(buf.subarray(0, n));
    off += n;
  }
  closeSync(fd);
  return h.digest('base64');
}

async function cp(from: string, to: string): Promise<number> {
  const t0 = performance.now();
  const child = spawn('cp', [from, to], { stdio: 'inherit' });
  const [code] = await once(child, 'exit');
  if (code !== 0) throw new Error(`cp exited ${code}`);
  // cp returns once the bytes are in the page cache; so does the receiver (it syncs once, at the end).
  const sync = spawn('sync', ['-f', to], { stdio: 'inherit' });
  await once(sync, 'exit');
  return performance.now() - t0;
}

/** A raw PUT of a file range, as curl would send it: the file piped into the socket. */
function putRange(url: string, path: string, file: string, start: number, length: number, digest: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const u = new URL(url + path);
    const req = http.request({ host: u.hostname, port: u.port, path: u.pathname + u.search, method: 'PUT', agent: false, headers: { authorization: `Bearer ${TOKEN}`, 'content-length': String(length), 'content-digest': `sha-256=:${digest}:` } }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`PUT ${path}: ${res.statusCode} ${text}`))));
    });
    req.on('error', reject);
    pipeline(createReadStream(file, { start, end: start + length - 1, highWaterMark: 1 << 20 }), req).catch(reject);
  });
}

async function call(url: string, method: string, path: string, init: { body?: string; headers?: Record<string, string> } = {}): Promise<any> {
  const res = await fetch(url + path, { method, body: init.body, headers: { authorization: `Bearer ${TOKEN}`, ...init.headers }, duplex: 'half', signal: AbortSignal.timeout(600_000) } as RequestInit);
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

await buildAll();
const dataDir = mkdtempSync(join(tmpdir(), 'felis-upload-bench-'));
const world = seedDemoWorld(dataDir, 'survival');
const cluster = await startCluster({ dataDir, rbacManifest: join(root, 'knative/rbac.yaml') });
const children: ChildProcess[] = [];
const out: Record<string, number> = {};
try {
  await createServer(cluster, 'survival', STOPPED);
  const kubeconfig = join(dataDir, 'function.kubeconfig');
  writeFileSync(kubeconfig, cluster.kubeconfigYaml(cluster.tokenFor('minecraft', 'felis-world')));
  const keyFile = join(dataDir, 'job-key');
  writeFileSync(keyFile, randomBytes(32), { mode: 0o600 });
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, KUBECONFIG: kubeconfig, PORT: '0', HOST: '127.0.0.1', FELIS_TOKEN: TOKEN, FELIS_IMAGE: 'felis-world/files:dev', FELIS_JOB_KEY_FILE: keyFile };
  const sessions = await startFunction('files-uploads', env);
  const single = await startFunction('files-upload', env);
  children.push(sessions.child, single.child);

  // The sources live in the data directory: the same disk as the world.
  const big = join(dataDir, 'big.bin');
  const small = join(dataDir, 'small.bin');
  makeFile(big, SIZE);
  makeFile(small, SINGLE);
  const parts: { start: number; length: number; digest: string }[] = [];
  for (let off = 0; off < SIZE; off += PART) parts.push({ start: off, length: Math.min(PART, SIZE - off), digest: digestOf(big, off, Math.min(PART, SIZE - off)) });
  const smallDigest = digestOf(small, 0, SINGLE);

  const cpBigMs = await cp(big, join(world, 'cp-big.bin'));
  rmSync(join(world, 'cp-big.bin'));
  const t0 = performance.now();
  const begun = await call(sessions.url, 'POST', `${BASE}/files/uploads?path=uploaded-big.bin`, { body: JSON.stringify({ size: SIZE }), headers: { 'content-type': 'application/json' } });
  for (const p of parts) {
    await putRange(sessions.url, `${BASE}/files/uploads/${begun.id}?offset=${p.start}`, big, p.start, p.length, p.digest);
  }
  await call(sessions.url, 'POST', `${BASE}/files/uploads/${begun.id}/commit`, { body: JSON.stringify({ overwrite: false }), headers: { 'content-type': 'application/json' } });
  const sessionMs = performance.now() - t0;
  rmSync(join(world, 'uploaded-big.bin'));

  const cpSmallMs = await cp(small, join(world, 'cp-small.bin'));
  const t1 = performance.now();
  await putRange(single.url, `${BASE}/files/upload?path=uploaded-small.bin`, small, 0, SINGLE, smallDigest);
  const singleMs = performance.now() - t1;

  const mib = (bytes: number, ms: number) => bytes / (1 << 20) / (ms / 1000);
  out.upload_mib_s = r1(mib(SIZE, sessionMs));
  out.cp_mib_s = r1(mib(SIZE, cpBigMs));
  out.upload_ratio_vs_cp = r3(sessionMs > 0 ? cpBigMs / sessionMs : 0);
  out.single_upload_mib_s = r1(mib(SINGLE, singleMs));
  out.single_cp_mib_s = r1(mib(SINGLE, cpSmallMs));
  out.single_upload_ratio_vs_cp = r3(singleMs > 0 ? cpSmallMs / singleMs : 0);
  out.upload_size_mib = SIZE >> 20;
} finally {
  for (const c of children) c.kill('SIGTERM');
  await Promise.all(children.map((c) => (c.exitCode === null ? once(c, 'exit') : undefined)));
  await cluster.close();
  rmSync(dataDir, { recursive: true, force: true });
}
if (asJson) console.log(JSON.stringify(out));
else {
  console.log(`upload (sessions, ${out.upload_size_mib} MiB in 32 MiB parts): ${out.upload_mib_s} MiB/s; cp: ${out.cp_mib_s} MiB/s; ratio ${out.upload_ratio_vs_cp}`);
  console.log(`upload (single PUT, 64 MiB): ${out.single_upload_mib_s} MiB/s; cp: ${out.single_cp_mib_s} MiB/s; ratio ${out.single_upload_ratio_vs_cp}`);
}
