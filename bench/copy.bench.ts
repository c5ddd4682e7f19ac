/**
 * `node bench/copy.bench.ts [--json] [--runs N] [--mib N] [--files N] [--file-kib N]`: a copy
 * through the files-copy function, end to end (the request, the sync Job that finds the source is
 * not a small file, the background Job, and `files/ops` polled every 20 ms until it says
 * succeeded), against `cp` / `cp -r` of the same source on the same disk. Two sources: one big
 * file (1 GiB by default) and a folder of many small files (10,000 of 16 KiB in 100 folders by
 * default). Runs are interleaved, so a busy machine skews both alike; the copies are removed after
 * each run, the sources at the end.
 *
 * `cp` leaves its copy in the page cache; ours is on disk before it is renamed into place (all or
 * nothing across a crash), so `cp` followed by `sync -f` is measured too (`cp_sync_ms_*`,
 * `copy_ratio_vs_cp_sync_*`).
 *
 * Keys: `copy_mib_s_file` / `cp_mib_s_file`, `copy_mib_s_folder` / `cp_mib_s_folder`,
 * `copy_ratio_vs_cp_file` / `_folder` (cp's time over ours: 1 is as fast as cp), and `copy_mib_s`
 * / `copy_ratio_vs_cp` (the big file's throughput, the lower of the two ratios).
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH_TOKEN, median, numberArg, startBenchStack, writeRandomFile } from './support.ts';

const argv = process.argv.slice(2);
const asJson = argv.includes('--json');
const RUNS = numberArg(argv, '--runs', 3);
const MIB = numberArg(argv, '--mib', 1024);
const FILES = numberArg(argv, '--files', 10_000);
const FILE_KIB = numberArg(argv, '--file-kib', 16);
const r1 = (x: number) => Math.round(x * 10) / 10;
const r2 = (x: number) => Math.round(x * 100) / 100;
const log = (s: string) => (asJson ? process.stderr : process.stdout).write(s + '\n');

function writeFolder(dir: string, files: number, kib: number): void {
  const chunk = randomBytes(kib << 10);
  for (let i = 0; i < files; i++) {
    const sub = join(dir, `d${i % 100}`);
    if (i < 100) mkdirSync(sub, { recursive: true });
    // Each file its own bytes (a counter in front), so nothing could share blocks.
    chunk.writeUInt32LE(i, 0);
    writeFileSync(join(sub, `f${i}.dat`), chunk);
  }
}

const stack = await startBenchStack('copy');
const results: Record<string, number> = {};
try {
  const env = { ...stack.env };
  const copyFn = await stack.startFunction('files-copy', env);
  const opsFn = await stack.startFunction('files-ops', env);
  const auth = { authorization: `Bearer ${BENCH_TOKEN}` };

  /** Request to the 202: the refused sync Job and the background Job's creation. */
  let starts: number[] = [];
  /** One copy through the route, from the request to files/ops saying it succeeded; ms. */
  const viaRoute = async (path: string, to: string): Promise<number> => {
    const t0 = performance.now();
    const r = await fetch(`${copyFn.url}/api/v1/servers/survival/files/copy?path=${encodeURIComponent(path)}`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json', prefer: 'wait=30' },
      body: JSON.stringify({ to }),
    });
    const body = (await r.json()) as { op?: { id: string } };
    if (r.status === 200) return performance.now() - t0;
    if (r.status !== 202 || !body.op) throw new Error(`copy ${path}: ${r.status} ${JSON.stringify(body)}`);
    starts.push(performance.now() - t0);
    for (;;) {
      const l = await fetch(`${opsFn.url}/api/v1/servers/survival/files/ops`, { headers: auth });
      const ops = ((await l.json()) as { ops: { id: string; state: string; error?: unknown }[] }).ops;
      const op = ops.find((o) => o.id === body.op!.id);
      if (op?.state === 'succeeded') return performance.now() - t0;
      if (op?.state === 'failed') throw new Error(`copy ${path} failed: ${JSON.stringify(op)}`);
      await new Promise((res) => setTimeout(res, 20));
    }
  };
  /** `cp -r`, and with `sync -f` after it: cp leaves the copy in the page cache, ours is durable before it lands. */
  const viaCp = (from: string, to: string, durable: boolean): number => {
    const t0 = performance.now();
    execFileSync('cp', ['-r', from, to]);
    if (durable) execFileSync('sync', ['-f', to]);
    return performance.now() - t0;
  };
  /** A pause for the previous copy's Job to end (it holds the world until its Pod is gone); `Prefer: wait` covers the rest. */
  const settled = () => new Promise((res) => setTimeout(res, 500));

  const cases: { key: string; src: string; mib: number; make: () => void }[] = [
    { key: 'file', src: 'big.bin', mib: MIB, make: () => writeRandomFile(join(stack.world, 'big.bin'), MIB << 20) },
    { key: 'folder', src: 'many', mib: (FILES * FILE_KIB) / 1024, make: () => writeFolder(join(stack.world, 'many'), FILES, FILE_KIB) },
  ];
  for (const c of cases) {
    c.make();
    const ours: number[] = [];
    starts = [];
    const cps: number[] = [];
    const cpSyncs: number[] = [];
    // A warm-up of each, so the page cache holds the source for both alike.
    await viaRoute(c.src, `${c.src}.warm`);
    rmSync(join(stack.world, `${c.src}.warm`), { recursive: true, force: true });
    await settled();
    for (let i = 0; i < RUNS; i++) {
      ours.push(await viaRoute(c.src, `${c.src}.copy`));
      rmSync(join(stack.world, `${c.src}.copy`), { recursive: true, force: true });
      execFileSync('sync', ['-f', stack.world]);
      await settled();
      cps.push(viaCp(join(stack.world, c.src), join(stack.world, `${c.src}.cp`), false));
      rmSync(join(stack.world, `${c.src}.cp`), { recursive: true, force: true });
      execFileSync('sync', ['-f', stack.world]); // what cp left dirty is not the next run's cost
      cpSyncs.push(viaCp(join(stack.world, c.src), join(stack.world, `${c.src}.cp`), true));
      rmSync(join(stack.world, `${c.src}.cp`), { recursive: true, force: true });
      if (!asJson) process.stderr.write('.');
    }
    const ms = median(ours);
    const cpMs = median(cps);
    results[`copy_mib_s_${c.key}`] = r1(c.mib / (ms / 1000));
    results[`cp_mib_s_${c.key}`] = r1(c.mib / (cpMs / 1000));
    results[`copy_ms_${c.key}`] = Math.round(ms);
    results[`copy_start_ms_${c.key}`] = Math.round(median(starts.slice(1)));
    results[`cp_ms_${c.key}`] = Math.round(cpMs);
    results[`copy_ratio_vs_cp_${c.key}`] = r2(cpMs / ms);
    results[`cp_sync_ms_${c.key}`] = Math.round(median(cpSyncs));
    results[`copy_ratio_vs_cp_sync_${c.key}`] = r2(median(cpSyncs) / ms);
    rmSync(join(stack.world, c.src), { recursive: true, force: true });
  }
  results.copy_mib_s = results.copy_mib_s_file!;
  results.copy_ratio_vs_cp = Math.min(results.copy_ratio_vs_cp_file!, results.copy_ratio_vs_cp_folder!);
} finally {
  await stack.close();
}

if (asJson) console.log(JSON.stringify(results));
else {
  log('');
  log(
    `copy of a ${MIB} MiB file: ${results.copy_ms_file} ms through the route (${results.copy_mib_s_file} MiB/s; 202 after ${results.copy_start_ms_file} ms), cp ${results.cp_ms_file} ms (${results.cp_mib_s_file} MiB/s): ratio ${results.copy_ratio_vs_cp_file}; cp + sync ${results.cp_sync_ms_file} ms: ratio ${results.copy_ratio_vs_cp_sync_file}`,
  );
  log(
    `copy of ${FILES} files of ${FILE_KIB} KiB: ${results.copy_ms_folder} ms through the route (${results.copy_mib_s_folder} MiB/s; 202 after ${results.copy_start_ms_folder} ms), cp -r ${results.cp_ms_folder} ms (${results.cp_mib_s_folder} MiB/s): ratio ${results.copy_ratio_vs_cp_folder}; cp -r + sync ${results.cp_sync_ms_folder} ms: ratio ${results.copy_ratio_vs_cp_sync_folder}`,
  );
}
