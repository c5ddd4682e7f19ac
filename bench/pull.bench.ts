/**
 * `node bench/pull.bench.ts [--json] [--runs N] [--mib N]`: a pull of one big file (1 GiB by
 * default) from a loopback HTTP server, by the Job program (`felis files --op pull`, the pull
 * Job's command line and heap limits, allowed to loopback by FELIS_PULL_ALLOW=127.0.0.1) beside
 * `curl -o` of the same URL into the same folder. Both are child processes; the server streams the
 * same bytes from memory for both, so neither pays for a disk read. Runs are interleaved (a busy
 * machine skews both alike) and each file is removed after its run.
 *
 * Our pull fsyncs its file before it links it into place (nothing half-written survives a crash);
 * `curl` leaves its bytes in the page cache, so `curl` followed by `sync -f` is timed too.
 *
 * `bench/pull-floor.ts` is timed too: the least a Node program does to fetch the same bytes durably
 * (http.get, batched writes, one fsync) with the pull's NODE_OPTIONS; the pull's gap to `curl` that
 * this floor shares is the runtime's and the fsync's, not the pull's. `pull-floor.ts --discard`
 * (receive and count, write nothing) is the floor under that: Node's HTTP client alone.
 *
 * Keys: `pull_mib_s`, `curl_mib_s`, `curl_sync_mib_s`, `node_floor_mib_s`, `pull_ratio_vs_curl`
 * (curl's time over ours: 1 is as fast as curl; the target is ≥ 0.8), `pull_ratio_vs_curl_sync`,
 * `pull_ratio_vs_node_floor`, `node_floor_ratio_vs_curl` and `node_receive_ratio_vs_curl`.
 */
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PULL_NODE_OPTIONS } from '../lib/job-spec/render.ts';
import { median, numberArg } from './support.ts';

const argv = process.argv.slice(2);
const asJson = argv.includes('--json');
const RUNS = numberArg(argv, '--runs', 3);
const MIB = numberArg(argv, '--mib', 1024);
const r1 = (x: number) => Math.round(x * 10) / 10;
const r2 = (x: number) => Math.round(x * 100) / 100;
const log = (s: string) => (asJson ? process.stderr : process.stdout).write(s + '\n');

const block = randomBytes(1 << 20);
const server = http.createServer((_req, res) => {
  res.writeHead(200, { 'content-length': MIB * block.length, 'content-type': 'application/octet-stream' });
  let sent = 0;
  const pump = () => {
    while (sent < MIB) {
      sent++;
      if (!res.write(block)) return void res.once('drain', pump);
    }
    res.end();
  };
  pump();
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/big.bin`;

const base = mkdtempSync(join(tmpdir(), 'felis-pull-bench-'));
const world = join(base, 'world');
mkdirSync(join(world, 'dl'), { recursive: true });
const program = fileURLToPath(new URL('../job/main.ts', import.meta.url));

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.once('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`${cmd} exited ${code}: ${err.slice(0, 500)}`))));
  });
}

async function ours(): Promise<number> {
  // The download is timed; its placement (a link, run as its own Job after it: docs/pulls.md) is not.
  const opId = randomBytes(8).toString('hex');
  const t0 = performance.now();
  const out = await run(process.execPath, [program, 'files', '--op', 'pull', '--path', 'dl', '--worlds-root', world, '--url', url, '--to', 'ours.bin'], {
    PATH: process.env.PATH,
    NODE_OPTIONS: PULL_NODE_OPTIONS,
    FELIS_PULL_ALLOW: '127.0.0.1',
    FELIS_OP_ID: opId,
  });
  const ms = performance.now() - t0;
  if (!out.includes('"staged":true')) throw new Error(`pull: ${out.slice(-300)}`);
  const placed = await run(process.execPath, [program, 'files', '--op', 'pull-place', '--path', 'dl', '--to', 'ours.bin', '--pull-op', opId, '--worlds-root', world], { PATH: process.env.PATH });
  if (!placed.includes('"files":1')) throw new Error(`pull-place: ${placed.slice(-300)}`);
  if (statSync(join(world, 'dl', 'ours.bin')).size !== MIB << 20) throw new Error('pull: wrong size');
  rmSync(join(world, 'dl', 'ours.bin'));
  return ms;
}

const floorProgram = fileURLToPath(new URL('./pull-floor.ts', import.meta.url));
async function floor(): Promise<number> {
  const file = join(world, 'dl', 'floor.bin');
  const t0 = performance.now();
  await run(process.execPath, [floorProgram, url, file], { PATH: process.env.PATH, NODE_OPTIONS: PULL_NODE_OPTIONS });
  const ms = performance.now() - t0;
  if (statSync(file).size !== MIB << 20) throw new Error('floor: wrong size');
  rmSync(file);
  return ms;
}

async function curl(sync: boolean): Promise<number> {
  const file = join(world, 'dl', 'curl.bin');
  const t0 = performance.now();
  await run('curl', ['-sS', '--fail', '-o', file, url], { PATH: process.env.PATH });
  if (sync) execFileSync('sync', ['-f', file]);
  const ms = performance.now() - t0;
  if (statSync(file).size !== MIB << 20) throw new Error('curl: wrong size');
  rmSync(file);
  return ms;
}

async function receiveOnly(): Promise<number> {
  const t0 = performance.now();
  const out = await run(process.execPath, [floorProgram, '--discard', url], { PATH: process.env.PATH, NODE_OPTIONS: PULL_NODE_OPTIONS });
  const ms = performance.now() - t0;
  if (Number(out) !== MIB << 20) throw new Error('receive: wrong size');
  return ms;
}

const t = { pull: [] as number[], curl: [] as number[], curlSync: [] as number[], floor: [] as number[], receive: [] as number[] };
try {
  await ours(); // warm: the program's first start compiles its sources
  // Each run starts with nothing dirty in the page cache: otherwise a run pays for writing back the
  // bytes of the one before it (curl's file, removed but still being written when the pull starts).
  const quiet = () => execFileSync('sync');
  for (let i = 0; i < RUNS; i++) {
    quiet();
    t.curl.push(await curl(false));
    quiet();
    t.pull.push(await ours());
    quiet();
    t.curlSync.push(await curl(true));
    quiet();
    t.floor.push(await floor());
    t.receive.push(await receiveOnly());
    log(`run ${i + 1}/${RUNS}: pull ${r1(t.pull[i])} ms, curl ${r1(t.curl[i])} ms, curl+sync ${r1(t.curlSync[i])} ms, node floor ${r1(t.floor[i])} ms, node receive only ${r1(t.receive[i])} ms`);
  }
} finally {
  server.close();
  rmSync(base, { recursive: true, force: true });
}
const mibS = (ms: number) => r1(MIB / (ms / 1000));
const [pull, curlMs, curlSync, floorMs, receiveMs] = [median(t.pull), median(t.curl), median(t.curlSync), median(t.floor), median(t.receive)];
const results = {
  pull_mib_s: mibS(pull),
  curl_mib_s: mibS(curlMs),
  curl_sync_mib_s: mibS(curlSync),
  node_floor_mib_s: mibS(floorMs),
  pull_ratio_vs_curl: r2(curlMs / pull),
  pull_ratio_vs_curl_sync: r2(curlSync / pull),
  pull_ratio_vs_node_floor: r2(floorMs / pull),
  node_floor_ratio_vs_curl: r2(curlMs / floorMs),
  node_receive_ratio_vs_curl: r2(curlMs / receiveMs),
};
if (asJson) console.log(JSON.stringify(results));
else {
  log(`pull of ${MIB} MiB from loopback, medians of ${RUNS}:`);
  for (const [k, v] of Object.entries(results)) log(`  ${k}: ${v}`);
}
