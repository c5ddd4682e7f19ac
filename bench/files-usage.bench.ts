/**
 * `node bench/files-usage.bench.ts [--json] [--runs N] [--files N]`: the disk-usage walk of
 * files/usage (functions/files-usage/job/usage-walk.ts) beside `du -s` on the same tree of
 * `--files` small files (default 200,000; the target is stated for 1,000,000) in folders of 1000,
 * a hundred folders to a group, made under the system's temp folder and removed after.
 *
 * The walk runs bundled (as the Job program carries it) in a child process of its own, with the
 * browse Pod's heap flags, so its peak RSS is the process's own (VmHWM: getrusage's maxRSS would
 * count the forked copy of this process, the bench's, before the child's exec).
 * Both are run once to warm the page cache, then interleaved N times (default 3), so a busy
 * machine skews both alike; the medians and their ratio are reported, the walk's time taken inside
 * its process (a Node start is not the walk's) beside du's whole run, and the whole child's too.
 * Each run's bytes must equal `du -s -B1`'s: the two count the same way (every entry, the folders
 * included, each inode once).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { ARCHIVE_NODE_OPTIONS } from '../lib/job-spec/render.ts';
import { common } from '../scripts/build.ts';
import { median, numberArg } from './support.ts';

const argv = process.argv.slice(2);
const asJson = argv.includes('--json');
const RUNS = numberArg(argv, '--runs', 3);
const FILES = numberArg(argv, '--files', 200_000);
const PER_FOLDER = 1000;
const FOLDERS_PER_GROUP = 100;
/** `200k` for 200,000: the keys name the size they were measured at. */
const label = FILES % 1000 === 0 ? `${FILES / 1000}k` : String(FILES);
const repo = fileURLToPath(new URL('..', import.meta.url));
const log = (s: string) => (asJson ? process.stderr : process.stdout).write(`${s}\n`);
const r1 = (x: number) => Math.round(x * 10) / 10;

/** The walk's driver: one walk of the whole tree, its figures, its time and the process's peak RSS. */
const DRIVER = `
import { readFileSync } from 'node:fs';
import { WorldRoot } from './job/volume/root.ts';
import { usageWalk } from './functions/files-usage/job/usage-walk.ts';
const root = WorldRoot.open(process.argv[2]);
const t0 = performance.now();
const r = await usageWalk(root, '', { depth: 2, top: 100, budgetMs: 1e9 });
const ms = performance.now() - t0;
const rssKiB = Number(/VmHWM:\\s*(\\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))[1]);
console.log(JSON.stringify({ ms, bytes: r.bytes, files: r.files, truncated: r.truncated, rssKiB }));
`;

/** `files` small files (0 to 4.8 KB: a few blocks each) in folders of PER_FOLDER, grouped by FOLDERS_PER_GROUP. */
function makeTree(dir: string, files: number): void {
  const data = Buffer.alloc(17 * 300, 'x');
  for (let f = 0; f * PER_FOLDER < files; f++) {
    const folder = path.join(dir, `g${Math.floor(f / FOLDERS_PER_GROUP)}`, `d${f}`);
    fs.mkdirSync(folder, { recursive: true });
    for (let i = 0; i < PER_FOLDER && f * PER_FOLDER + i < files; i++) fs.writeFileSync(path.join(folder, `f${i}.dat`), data.subarray(0, (i % 17) * 300));
  }
}

const base = fs.mkdtempSync(path.join(os.tmpdir(), 'felis-usage-bench-'));
const walkMs: number[] = [];
const walkProcessMs: number[] = [];
const duMs: number[] = [];
let peakRssMiB = 0;
const t = performance.now();
try {
  const tree = path.join(base, 'world');
  makeTree(tree, FILES);
  log(`a tree of ${FILES} files made in ${r1((performance.now() - t) / 1000)} s`);
  const driver = path.join(base, 'usage-driver.mjs');
  await build({ ...common, sourcemap: false, stdin: { contents: DRIVER, resolveDir: repo, loader: 'ts', sourcefile: 'usage-driver.ts' }, outfile: driver });

  const du = (): { ms: number; bytes: number } => {
    const t0 = performance.now();
    const out = execFileSync('du', ['-s', '-B1', tree], { encoding: 'utf8' });
    return { ms: performance.now() - t0, bytes: Number(out.split('\t')[0]) };
  };
  const walk = (): { ms: number; processMs: number; bytes: number; rssMiB: number } => {
    const t0 = performance.now();
    const r = spawnSync(process.execPath, [driver, tree], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: ARCHIVE_NODE_OPTIONS } });
    const processMs = performance.now() - t0;
    if (r.status !== 0) throw new Error(`the walk failed: ${r.stderr.slice(-2000)}`);
    const out = JSON.parse(r.stdout.trim().split('\n').pop()!) as { ms: number; bytes: number; files: number; truncated: boolean; rssKiB: number };
    if (out.truncated || out.files !== FILES) throw new Error(`the walk saw ${out.files} files (truncated: ${out.truncated}), expected ${FILES}`);
    return { ms: out.ms, processMs, bytes: out.bytes, rssMiB: out.rssKiB / 1024 };
  };
  du();
  walk();
  for (let i = 0; i < RUNS; i++) {
    const d = du();
    const w = walk();
    if (w.bytes !== d.bytes) throw new Error(`the walk counted ${w.bytes} bytes, du -s ${d.bytes}`);
    duMs.push(d.ms);
    walkMs.push(w.ms);
    walkProcessMs.push(w.processMs);
    peakRssMiB = Math.max(peakRssMiB, w.rssMiB);
    if (!asJson) process.stdout.write('.');
  }
} finally {
  fs.rmSync(base, { recursive: true, force: true });
}

const out = {
  [`usage_walk_ms_p50_${label}`]: r1(median(walkMs)),
  [`usage_process_ms_p50_${label}`]: r1(median(walkProcessMs)),
  [`du_ms_p50_${label}`]: r1(median(duMs)),
  [`usage_vs_du_ratio_${label}`]: Math.round((median(walkMs) / median(duMs)) * 100) / 100,
  [`usage_peak_rss_mib_${label}`]: Math.round(peakRssMiB),
};
if (asJson) {
  console.log(JSON.stringify(out));
} else {
  console.log(`\nfiles/usage's walk over ${FILES} files, ${RUNS} runs each beside du -s, interleaved (${r1((performance.now() - t) / 1000)} s in all)`);
  console.log(`  the walk (inside its process)   p50 ${out[`usage_walk_ms_p50_${label}`]} ms`);
  console.log(`  its whole process (Node start)  p50 ${out[`usage_process_ms_p50_${label}`]} ms`);
  console.log(`  du -s -B1                       p50 ${out[`du_ms_p50_${label}`]} ms`);
  console.log(`  ratio                           ${out[`usage_vs_du_ratio_${label}`]}x (target: at most 1.2 at 1,000,000 files)`);
  console.log(`  peak RSS of the walk's process  ${out[`usage_peak_rss_mib_${label}`]} MiB (target: at most 64)`);
}
