/**
 * `node bench/upload.bench.ts [--json] [--size-mib N] [--runs N] [--node-client]`: upload
 * throughput end to end over HTTP, against `cp` of the same file on the same disk. A file of N MiB
 * (default 1024) goes through the session routes of the files-uploads function (begin, 32 MiB
 * parts, commit) into a receiver Pod of the embedded cluster that writes it into the world volume;
 * a 64 MiB file goes through the single PUT of files-upload. The client is curl (one process, one
 * kept-alive connection, `-T` of each part: a native client, as a browser is) unless absent or
 * `--node-client`; the parts are cut into files and their digests computed beforehand (a client
 * hashes as it reads: that cost is the client's).
 * Each upload is timed from the first request to the last answer; `cp` copies the same source into
 * the same world folder and fsyncs the copy, as the receiver does before it answers. Runs are
 * interleaved and `sync` runs before each, so neither pays for the other's write-back; medians.
 * `sha256_mib_s` is one SHA-256 pass over the file in this Node (its OpenSSL), 1 MiB reads: a
 * receiver checks each part and the whole file, two passes on one thread, so it cannot go faster
 * than half of that. Each function bundle runs in its own
 * process, as a Knative instance would.
 */
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { closeSync, createReadStream, openSync, readSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { cpuSeconds, highestPeak, watchChildren } from './proc-watch.ts';
import { BENCH_TOKEN, curlClient, median, numberArg, startBenchStack, writeRandomFile } from './support.ts';

const argv = process.argv.slice(2);
const asJson = argv.includes('--json');
const SIZE = numberArg(argv, '--size-mib', 1024) << 20;
const RUNS = numberArg(argv, '--runs', 3);
const execFileAsync = promisify(execFile);
const CURL = curlClient(argv);
const SINGLE = 64 << 20;
const PART = 32 << 20;
const BASE = '/api/v1/servers/survival';
const r1 = (x: number) => Math.round(x * 10) / 10;
const r3 = (x: number) => Math.round(x * 1000) / 1000;

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

async function run(cmd: string, args: string[]): Promise<void> {
  const child = spawn(cmd, args, { stdio: 'inherit' });
  const [code] = await once(child, 'exit');
  if (code !== 0) throw new Error(`${cmd} exited ${code}`);
}

/** cp, then an fsync of the copy (coreutils `sync FILE`): the receiver answers once its bytes are synced too. */
async function cp(from: string, to: string): Promise<number> {
  await run('sync', []);
  const t0 = performance.now();
  await run('cp', [from, to]);
  await run('sync', [to]);
  return performance.now() - t0;
}

interface Put {
  url: string;
  start: number;
  length: number;
  digest: string;
}

/**
 * Raw PUTs of `file[start, start+length)`, one after another. curl sends them all from one
 * process over one kept-alive connection (`--next`), as a browser would, each part's own file
 * (cut beforehand) with `-T`; the Node client pipes each range into a request of its own.
 */
async function putAll(file: string, puts: Put[]): Promise<void> {
  const headers = (p: Put) => ({ authorization: `Bearer ${BENCH_TOKEN}`, 'content-digest': `sha-256=:${p.digest}:` });
  if (CURL) {
    const args = puts.flatMap((p, i) => [
      ...(i > 0 ? ['--next'] : []),
      ...['-sS', '--fail-with-body', '-o', '/dev/null', '-w', '%{http_code}\\n', '-X', 'PUT', '-T', partFile(file, p.start, p.length)],
      ...Object.entries(headers(p)).flatMap(([k, v]) => ['-H', `${k}: ${v}`]),
      p.url,
    ]);
    const { stdout } = await execFileAsync('curl', ['--fail-early', ...args], { maxBuffer: 1 << 20 });
    const codes = stdout.trim().split('\n');
    if (codes.length !== puts.length || codes.some((c) => c !== '200')) throw new Error(`PUTs answered ${codes.join(' ')}`);
    return;
  }
  for (const p of puts) await put(p.url, file, p.start, p.length, headers(p));
}

function put(url: string, file: string, start: number, length: number, headers: Record<string, string>): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const u = new URL(url);
    const req = http.request({ host: u.hostname, port: u.port, path: u.pathname + u.search, method: 'PUT', agent: false, headers: { ...headers, 'content-length': String(length) } }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`PUT ${url}: ${res.statusCode} ${text}`))));
    });
    req.on('error', reject);
    pipeline(createReadStream(file, { start, end: start + length - 1, highWaterMark: 1 << 20 }), req).catch(reject);
  });
}

const partFile = (file: string, start: number, length: number) => `${file}.${start}-${length}`;

/** Cuts `file[start, start+length)` into its own file for curl -T (not timed). */
function cutPart(file: string, start: number, length: number): void {
  const fd = openSync(file, 'r');
  const buf = Buffer.allocUnsafe(length);
  try {
    readSync(fd, buf, 0, length, start);
  } finally {
    closeSync(fd);
  }
  writeFileSync(partFile(file, start, length), buf);
}

async function call(url: string, method: string, path: string, init: { body?: string; headers?: Record<string, string> } = {}): Promise<any> {
  const res = await fetch(url + path, {
    method,
    body: init.body,
    headers: { authorization: `Bearer ${BENCH_TOKEN}`, ...init.headers },
    duplex: 'half',
    signal: AbortSignal.timeout(600_000),
  } as RequestInit);
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

const stack = await startBenchStack('upload');
const { dataDir, world } = stack;
const out: Record<string, number | string> = {};
try {
  const env = { ...stack.env, FELIS_JOB_KEY_FILE: stack.keyFile };
  const sessions = await stack.startFunction('files-uploads', env);
  const single = await stack.startFunction('files-upload', env);

  // The sources live in the data directory: the same disk as the world.
  const big = join(dataDir, 'big.bin');
  const small = join(dataDir, 'small.bin');
  writeRandomFile(big, SIZE);
  writeRandomFile(small, SINGLE);
  const parts: { start: number; length: number; digest: string }[] = [];
  for (let off = 0; off < SIZE; off += PART) parts.push({ start: off, length: Math.min(PART, SIZE - off), digest: digestOf(big, off, Math.min(PART, SIZE - off)) });
  const smallDigest = digestOf(small, 0, SINGLE);

  if (CURL) {
    for (const p of parts) cutPart(big, p.start, p.length);
    cutPart(small, 0, SINGLE);
  }
  const sha0 = performance.now();
  digestOf(big, 0, SIZE);
  const shaMs = performance.now() - sha0;

  const sessionMs: number[] = [];
  const singleMs: number[] = [];
  const cpBigMs: number[] = [];
  const cpSmallMs: number[] = [];
  // Peak RSS (MiB) of the sessions function and of the receiver Jobs' programs over the session uploads.
  let fnPeak = 0;
  let podPeak = 0;
  const fnCpu: number[] = [];
  const podCpu: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    cpBigMs.push(await cp(big, join(world, 'cp-big.bin')));
    rmSync(join(world, 'cp-big.bin'));
    await run('sync', []);
    const watch = watchChildren();
    const t0 = performance.now();
    const begun = await call(sessions.url, 'POST', `${BASE}/files/uploads?path=uploaded-big.bin`, { body: JSON.stringify({ size: SIZE }), headers: { 'content-type': 'application/json' } });
    await putAll(
      big,
      parts.map((p) => ({ ...p, url: `${sessions.url}${BASE}/files/uploads/${begun.id}?offset=${p.start}` })),
    );
    await call(sessions.url, 'POST', `${BASE}/files/uploads/${begun.id}/commit`, { body: JSON.stringify({ overwrite: false }), headers: { 'content-type': 'application/json' } });
    sessionMs.push(performance.now() - t0);
    const seen = watch.stop();
    // The single-PUT function idles meanwhile; only the sessions function and the receiver move bytes.
    const fnPids = new Set([sessions.child.pid!]);
    const podPids = new Set([sessions.child.pid!, single.child.pid!]);
    fnPeak = Math.max(fnPeak, highestPeak(seen, fnPids));
    podPeak = Math.max(podPeak, highestPeak(seen, podPids, true));
    fnCpu.push(cpuSeconds(seen, fnPids));
    podCpu.push(cpuSeconds(seen, podPids, true));
    rmSync(join(world, 'uploaded-big.bin'));

    cpSmallMs.push(await cp(small, join(world, 'cp-small.bin')));
    rmSync(join(world, 'cp-small.bin'));
    await run('sync', []);
    const t1 = performance.now();
    await putAll(small, [{ url: `${single.url}${BASE}/files/upload?path=uploaded-small.bin`, start: 0, length: SINGLE, digest: smallDigest }]);
    singleMs.push(performance.now() - t1);
    rmSync(join(world, 'uploaded-small.bin'));
    if (!asJson) process.stderr.write('.');
  }

  const mib = (bytes: number, ms: number) => bytes / (1 << 20) / (ms / 1000);
  out.upload_mib_s = r1(mib(SIZE, median(sessionMs)));
  out.cp_mib_s = r1(mib(SIZE, median(cpBigMs)));
  out.upload_ratio_vs_cp = r3(median(cpBigMs) / median(sessionMs));
  out.single_upload_mib_s = r1(mib(SINGLE, median(singleMs)));
  out.single_cp_mib_s = r1(mib(SINGLE, median(cpSmallMs)));
  out.single_upload_ratio_vs_cp = r3(median(cpSmallMs) / median(singleMs));
  out.upload_fn_peak_rss_mib = fnPeak;
  out.upload_pod_peak_rss_mib = podPeak;
  out.upload_fn_cpu_s_per_gib = Math.round(((median(fnCpu) * (1 << 30)) / SIZE) * 100) / 100;
  out.upload_pod_cpu_s_per_gib = Math.round(((median(podCpu) * (1 << 30)) / SIZE) * 100) / 100;
  out.sha256_mib_s = r1(mib(SIZE, shaMs));
  out.upload_size_mib = SIZE >> 20;
  out.runs = RUNS;
} finally {
  await stack.close();
}
out.client = CURL ? 'curl' : 'node';
if (asJson) console.log(JSON.stringify(out));
else {
  process.stderr.write('\n');
  console.log(`upload (sessions, ${out.upload_size_mib} MiB in 32 MiB parts): ${out.upload_mib_s} MiB/s; cp: ${out.cp_mib_s} MiB/s; ratio ${out.upload_ratio_vs_cp}`);
  console.log(`upload (single PUT, 64 MiB): ${out.single_upload_mib_s} MiB/s; cp: ${out.single_cp_mib_s} MiB/s; ratio ${out.single_upload_ratio_vs_cp}`);
  console.log(
    `peak RSS during the session upload: function ${out.upload_fn_peak_rss_mib} MiB, receiver ${out.upload_pod_peak_rss_mib} MiB; CPU per GiB: function ${out.upload_fn_cpu_s_per_gib} s, receiver ${out.upload_pod_cpu_s_per_gib} s`,
  );
  console.log(`one SHA-256 pass over the file here: ${out.sha256_mib_s} MiB/s; a receiver makes two; medians of ${RUNS} runs, client ${out.client}`);
}
