/**
 * `node bench/files-content-search.bench.ts [--json] [--runs N] [--mib N] [--gib1]`: the content
 * search of files/search?content= (functions/files-search/job/content-search.ts) beside
 * `grep -rIiF` on the same tree of `--mib` MiB (default 128; `--gib1` for the 1 GiB the target is
 * stated at), made under the system's temp folder and removed after.
 *
 * The tree: folders of 40 files; three files in four are text (server-log lines, 64 KiB to 1 MiB),
 * one in four binary (a NUL in its first bytes, as a region file, 1 MiB), so both tools skip those
 * after their first block. One text file in 16 holds the needle once, in another case than asked.
 *
 * The search runs bundled (as the Job program carries it) in a child process of its own, with its
 * time and byte budgets lifted (a search is otherwise cut at 5 s), its time taken inside the
 * process (a Node start is not the search's) and the whole child's too; grep's is its whole run.
 * Both are run once to warm the page cache, then interleaved N times (default 5), so a busy machine
 * skews both alike; medians are reported. Each run's matching lines must be grep's count.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { common } from '../scripts/build.ts';
import { median, numberArg, prng } from './support.ts';

const argv = process.argv.slice(2);
const asJson = argv.includes('--json');
const RUNS = numberArg(argv, '--runs', 5);
const MIB = argv.includes('--gib1') ? 1024 : numberArg(argv, '--mib', 128);
const NEEDLE = 'needle-steve';
const label = MIB % 1024 === 0 ? `${MIB / 1024}gib` : `${MIB}mib`;
const repo = fileURLToPath(new URL('..', import.meta.url));
const log = (s: string) => (asJson ? process.stderr : process.stdout).write(`${s}\n`);
const r1 = (x: number) => Math.round(x * 10) / 10;

/** The search's driver: one search of the whole tree; its time, lines and bytes read. */
const DRIVER = `
import { WorldRoot } from './job/volume/root.ts';
import { contentSearchTree } from './functions/files-search/job/content-search.ts';
const root = WorldRoot.open(process.argv[2]);
const t0 = performance.now();
const r = await contentSearchTree(root, '', { content: process.argv[3], limit: 1000, budgetMs: 1e9, budgetBytes: 2 ** 50 });
const ms = performance.now() - t0;
console.log(JSON.stringify({ ms, lines: r.report.matches.length, truncated: r.report.truncated, bytes: r.report.scanned_bytes, files: r.report.scanned_files }));
`;

const LINES = [
  '[12:00:01] [Server thread/INFO]: Preparing spawn area: 84%',
  '[12:00:02] [Server thread/INFO]: Done (3.214s)! For help, type "help"',
  '[12:01:13] [User Authenticator #1/INFO]: UUID of player Alex is 6f2c1b0e-3a4d-4e5f-8a9b-0c1d2e3f4a5b',
  '[12:01:14] [Server thread/INFO]: Alex joined the game',
  "[12:05:40] [Server thread/WARN]: Can't keep up! Is the server overloaded? Running 2143ms or 42 ticks behind",
  '[12:09:02] [Async Chat Thread - #3/INFO]: <Alex> has anyone seen the diamonds near spawn?',
  '[12:10:00] [Server thread/INFO]: Saving the game (this may take a moment!)',
];

/** About `mib` MiB under `dir`; answers the number of needle lines written. */
function makeTree(dir: string, mib: number): number {
  const rand = prng(43);
  const text = Buffer.from(`${Array.from({ length: 4000 }, (_, i) => LINES[i % LINES.length]).join('\n')}\n`);
  let left = mib << 20;
  let needles = 0;
  for (let f = 0; left > 0; f++) {
    const folder = path.join(dir, `d${Math.floor(f / 40)}`);
    if (f % 40 === 0) fs.mkdirSync(folder, { recursive: true });
    if (f % 4 === 3) {
      const bin = Buffer.alloc(Math.min(1 << 20, left), 7);
      bin[100] = 0;
      fs.writeFileSync(path.join(folder, `r.${f}.mca`), bin);
      left -= bin.length;
      continue;
    }
    const size = Math.min(left, (64 << 10) + Math.floor(rand() * (960 << 10)));
    const parts: Buffer[] = [];
    for (let n = 0; n < size; n += text.length) parts.push(text);
    const body = Buffer.concat(parts).subarray(0, size);
    if (f % 16 === 0 && size > 1000) {
      body.write(`\n[12:11:00] [Server thread/INFO]: ${NEEDLE.toUpperCase()} was here\n`, size >> 1, 'latin1');
      needles++;
    }
    fs.writeFileSync(path.join(folder, `latest-${f}.log`), body);
    left -= size;
  }
  return needles;
}

const base = fs.mkdtempSync(path.join(os.tmpdir(), 'felis-csearch-bench-'));
const searchMs: number[] = [];
const processMs: number[] = [];
const grepMs: number[] = [];
let bytesRead = 0;
const t = performance.now();
try {
  const tree = path.join(base, 'world');
  const needles = makeTree(tree, MIB);
  log(`a tree of ${MIB} MiB made in ${r1((performance.now() - t) / 1000)} s (${needles} needle lines)`);
  const driver = path.join(base, 'content-search-driver.mjs');
  await build({ ...common, sourcemap: false, stdin: { contents: DRIVER, resolveDir: repo, loader: 'ts', sourcefile: 'content-search-driver.ts' }, outfile: driver });

  const grep = (): { ms: number; lines: number } => {
    const t0 = performance.now();
    let out = '';
    try {
      out = execFileSync('grep', ['-rIiF', NEEDLE, tree], { encoding: 'utf8', maxBuffer: 1 << 28 });
    } catch (e) {
      if ((e as { status?: number }).status !== 1) throw e; // 1: nothing found
    }
    return { ms: performance.now() - t0, lines: out === '' ? 0 : out.trimEnd().split('\n').length };
  };
  const search = (): { ms: number; processMs: number; lines: number; bytes: number } => {
    const t0 = performance.now();
    const r = spawnSync(process.execPath, [driver, tree, NEEDLE], { encoding: 'utf8' });
    const whole = performance.now() - t0;
    if (r.status !== 0) throw new Error(`the search failed: ${r.stderr.slice(-2000)}`);
    const out = JSON.parse(r.stdout.trim().split('\n').pop()!) as { ms: number; lines: number; truncated: boolean; bytes: number };
    if (out.truncated) throw new Error('the search stopped early');
    return { ms: out.ms, processMs: whole, lines: out.lines, bytes: out.bytes };
  };
  grep();
  search();
  for (let i = 0; i < RUNS; i++) {
    const g = grep();
    const s = search();
    if (s.lines !== g.lines || s.lines !== needles) throw new Error(`the search found ${s.lines} lines, grep ${g.lines}, the tree holds ${needles}`);
    grepMs.push(g.ms);
    searchMs.push(s.ms);
    processMs.push(s.processMs);
    bytesRead = s.bytes;
    if (!asJson) process.stdout.write('.');
  }
} finally {
  fs.rmSync(base, { recursive: true, force: true });
}

const out = {
  [`content_search_ms_p50_${label}`]: r1(median(searchMs)),
  [`content_search_process_ms_p50_${label}`]: r1(median(processMs)),
  [`content_grep_ms_p50_${label}`]: r1(median(grepMs)),
  // grep's time over the search's: the search's share of grep's throughput (target: at least 0.5).
  [`content_search_vs_grep_throughput_${label}`]: Math.round((median(grepMs) / median(searchMs)) * 100) / 100,
  [`content_search_mib_read_${label}`]: r1(bytesRead / (1 << 20)),
};
if (asJson) {
  console.log(JSON.stringify(out));
} else {
  console.log(`\nfiles/search?content= over ${MIB} MiB, ${RUNS} runs each beside grep -rIiF, interleaved (${r1((performance.now() - t) / 1000)} s in all)`);
  console.log(`  the search (inside its process)  p50 ${out[`content_search_ms_p50_${label}`]} ms`);
  console.log(`  its whole process (Node start)   p50 ${out[`content_search_process_ms_p50_${label}`]} ms`);
  console.log(`  grep -rIiF                       p50 ${out[`content_grep_ms_p50_${label}`]} ms`);
  console.log(`  throughput vs grep               ${out[`content_search_vs_grep_throughput_${label}`]}x (target: at least 0.5 at 1 GiB)`);
  console.log(`  read by the search               ${out[`content_search_mib_read_${label}`]} MiB (binary files: their first block only)`);
}
