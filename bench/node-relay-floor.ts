/**
 * `node bench/node-relay-floor.ts [--json] [--mib N] [--runs N]`: the fastest a download of our
 * shape goes when every hop is Node, as ours are, with nothing of ours in it. An origin process
 * answers one file in 1 MiB reads, a relay process pipes `http.request`'s response into its own
 * `http` response (the files-download function's hop, bare), and curl writes the bytes to a file,
 * as in the download bench. Loopback only; both processes end with the run.
 *
 * transfer-floor.py's relay copies nothing in user space (`sendfile`, `splice`); Node has neither,
 * so that floor is out of any Node relay's reach. This one says how far below it a bare Node relay
 * lands on the same machine in the same run.
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
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
  const speeds: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const dst = join(dir, 'received.bin');
    const { stdout } = await promisify(execFile)('curl', ['-sS', '--fail', '-o', dst, '-w', '%{speed_download} %{size_download}', `http://127.0.0.1:${relay.port}/`]);
    const [speed, size] = stdout.trim().split(' ').map(Number) as [number, number];
    if (size !== MIB << 20) throw new Error(`the relay gave ${size} of ${MIB << 20} bytes`);
    speeds.push(speed / (1 << 20));
    rmSync(dst);
  }
  const out = { download_node_relay_mib_s: Math.round(median(speeds) * 10) / 10, node_relay_mib: MIB, node_relay_runs: RUNS };
  console.log(asJson ? JSON.stringify(out) : `bare Node relay (origin -> http relay -> curl to a file), ${MIB} MiB: ${out.download_node_relay_mib_s} MiB/s (median of ${RUNS})`);
} finally {
  for (const c of children) c.kill();
  rmSync(dir, { recursive: true, force: true });
}
