/**
 * `node bench/node-relay-floor.ts [--json] [--mib N] [--runs N]`: the fastest our two transfers go
 * when every hop is Node, as ours are, with nothing of ours in it. Loopback only; every process
 * ends with the run.
 *
 * - Download: an origin process answers one file in 1 MiB reads, a relay process pipes
 *   `http.request`'s response into its own `http` response (the files-download function's hop,
 *   bare), and curl writes the bytes to a file, as in the download bench.
 * - Upload: curl sends the file (`-T`), a relay process pipes the request into `http.request` to a
 *   receiver process (the files-uploads function's hop, bare), and the receiver hashes every byte
 *   twice with SHA-256 (a part's digest and the whole file's, as ours does), writes it to a file,
 *   fdatasyncs and answers: our upload's shape in one request, without parts or sessions.
 *
 * transfer-floor.py's relay copies nothing in user space (`sendfile`, `splice`); Node has neither,
 * so that floor is out of any Node relay's reach. This one says how far below it a bare Node relay
 * lands on the same machine in the same run.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { median, numberArg, writeRandomFile } from './support.ts';

const argv = process.argv.slice(2);
const asJson = argv.includes('--json');
const MIB = numberArg(argv, '--mib', 1024);
const RUNS = numberArg(argv, '--runs', 3);

const ORIGIN = `
const http = require('node:http'), fs = require('node:fs');
const file = process.argv[1], size = fs.statSync(file).size;
const server = http.createServer(async (req, res) => {
  res.writeHead(200, { 'content-length': size });
  const fd = fs.openSync(file, 'r');
  for (let at = 0; at < size; ) {
    const b = Buffer.allocUnsafe(Math.min(1 << 20, size - at));
    const n = fs.readSync(fd, b, 0, b.length, at);
    at += n;
    if (!res.write(n === b.length ? b : b.subarray(0, n))) await new Promise((r) => res.once('drain', r));
  }
  fs.closeSync(fd);
  res.end();
}).listen(0, '127.0.0.1', () => console.log(server.address().port));
`;

const RELAY = `
const http = require('node:http'), { pipeline } = require('node:stream');
const origin = Number(process.argv[1]);
const server = http.createServer((req, out) => {
  http.request({ host: '127.0.0.1', port: origin, path: '/', agent: false }, (res) => {
    out.writeHead(200, { 'content-length': res.headers['content-length'] });
    pipeline(res, out, () => {});
  }).end();
}).listen(0, '127.0.0.1', () => console.log(server.address().port));
`;

const RECEIVER = `
const http = require('node:http'), fs = require('node:fs'), { createHash } = require('node:crypto');
const file = process.argv[1];
const server = http.createServer(async (req, res) => {
  const fd = fs.openSync(file, 'w', 0o600);
  const part = createHash('sha256'), whole = createHash('sha256');
  // One write in flight on libuv's threads while the next chunk is hashed.
  const writeAll = async (b, at) => { for (let o = 0; o < b.length; ) o += await new Promise((ok, no) => fs.write(fd, b, o, b.length - o, at + o, (e, n) => (e ? no(e) : ok(n)))); };
  let at = 0, writing = Promise.resolve();
  for await (const b of req) {
    part.update(b);
    whole.update(b);
    await writing;
    writing = writeAll(b, at);
    at += b.length;
  }
  await writing;
  fs.fdatasyncSync(fd);
  fs.closeSync(fd);
  res.end(JSON.stringify({ bytes: at, part: part.digest('hex'), whole: whole.digest('hex') }));
}).listen(0, '127.0.0.1', () => console.log(server.address().port));
`;

const UPLOAD_RELAY = `
const http = require('node:http'), { pipeline } = require('node:stream');
const receiver = Number(process.argv[1]);
const server = http.createServer((req, out) => {
  const up = http.request({ host: '127.0.0.1', port: receiver, path: '/', method: 'PUT', agent: false, headers: { 'content-length': req.headers['content-length'] } }, (res) => {
    out.writeHead(res.statusCode, { 'content-length': res.headers['content-length'] });
    pipeline(res, out, () => {});
  });
  pipeline(req, up, () => {});
}).listen(0, '127.0.0.1', () => console.log(server.address().port));
`;

/** Starts a script that prints its port first; returns the process and the port. */
async function serve(script: string, arg: string): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, ['-e', script, arg], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [line] = (await once(child.stdout!, 'data')) as [Buffer];
  return { child, port: Number(line.toString().trim()) };
}

const dir = mkdtempSync(join(tmpdir(), 'felis-node-floor-'));
const children: ChildProcess[] = [];
try {
  const file = join(dir, 'big.bin');
  writeRandomFile(file, MIB << 20);
  const origin = await serve(ORIGIN, file);
  children.push(origin.child);
  const relay = await serve(RELAY, String(origin.port));
  children.push(relay.child);
  const receiver = await serve(RECEIVER, join(dir, 'uploaded.bin'));
  children.push(receiver.child);
  const upRelay = await serve(UPLOAD_RELAY, String(receiver.port));
  children.push(upRelay.child);
  const curl = async (args: string[]) => (await promisify(execFile)('curl', ['-sS', '--fail', ...args])).stdout;
  const down: number[] = [];
  const up: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const dst = join(dir, 'received.bin');
    const [speed, size] = (await curl(['-o', dst, '-w', '%{speed_download} %{size_download}', `http://127.0.0.1:${relay.port}/`])).trim().split(' ').map(Number) as [number, number];
    if (size !== MIB << 20) throw new Error(`the relay gave ${size} of ${MIB << 20} bytes`);
    down.push(speed / (1 << 20));
    rmSync(dst);
    // The receiver's answer (its byte count) comes first, then curl's timing; no 100-continue wait.
    const answer = await curl(['-H', 'expect:', '-T', file, '-w', '\n%{speed_upload}', `http://127.0.0.1:${upRelay.port}/`]);
    const [body, upSpeed] = answer.trim().split('\n') as [string, string];
    const got = (JSON.parse(body) as { bytes: number }).bytes;
    if (got !== MIB << 20) throw new Error(`the receiver got ${got} of ${MIB << 20} bytes`);
    up.push(Number(upSpeed) / (1 << 20));
  }
  const r1 = (x: number) => Math.round(x * 10) / 10;
  const out = { download_node_relay_mib_s: r1(median(down)), upload_node_relay_mib_s: r1(median(up)), node_relay_mib: MIB, node_relay_runs: RUNS };
  console.log(
    asJson
      ? JSON.stringify(out)
      : `bare Node relays, ${MIB} MiB, median of ${RUNS}: download (origin -> relay -> curl to a file) ${out.download_node_relay_mib_s} MiB/s; upload (curl -> relay -> receiver hashing twice, fdatasync) ${out.upload_node_relay_mib_s} MiB/s`,
  );
} finally {
  for (const c of children) c.kill();
  rmSync(dir, { recursive: true, force: true });
}
