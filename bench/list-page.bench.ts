/**
 * `node bench/list-page.bench.ts [--json] [--runs N] [--entries N]`: a paged listing of a big folder
 * (default 500,000 empty files; `--entries 20000` for a quick run) — a 1000-entry page starting in
 * the middle (`after`), through the files-list function with a warm browse session on the embedded
 * stack, beside the bare list op in this process, with the peak RSS of the browse Pod's process
 * (the embedded kubelet runs it as a child process: found in /proc by its command line).
 *
 * The browse Pod's first page of the folder scans it (`list_page_first_ms_<n>k`, a cold index) and
 * then builds the folder's sorted index on its scratch disk (job/listing/list-index.ts); the warm pages
 * after that read the index. The bare op has no index: every one scans.
 *
 * Keys: `list_page_first_ms_<n>k`, `list_page_ms_p50_warm_<n>k`, `list_page_ms_p50_bare_<n>k`,
 * `list_page_browse_rss_mib` (peak, VmHWM), `list_page_entries`.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execute } from '../job/dispatch/execute.ts';
import { BENCH_TOKEN, median, numberArg, startBenchStack } from './support.ts';

const argv = process.argv.slice(2);
const asJson = argv.includes('--json');
const RUNS = numberArg(argv, '--runs', 20);
const ENTRIES = numberArg(argv, '--entries', 500_000);
const LABEL = `${Math.round(ENTRIES / 1000)}k`;
const FUNCTION_USER = 'system:serviceaccount:minecraft:felis-world';
const r1 = (x: number) => Math.round(x * 10) / 10;
const log = (s: string) => void (!asJson && process.stderr.write(s));

/** The page: 1000 names after the middle one. Names are `name-<7 digits>.dat`, made in that order. */
const AFTER = `name-${String(Math.floor(ENTRIES / 2)).padStart(7, '0')}`;
const PATH = `/api/v1/servers/survival/files?path=big&limit=1000&after=${encodeURIComponent(AFTER)}`;

async function page(url: string): Promise<{ ms: number; body: { entries: Array<{ name: string }>; truncated: boolean } }> {
  const t0 = performance.now();
  const res = await fetch(url + PATH, { headers: { authorization: `Bearer ${BENCH_TOKEN}` }, signal: AbortSignal.timeout(120_000) });
  const text = await res.text();
  const ms = performance.now() - t0;
  if (res.status !== 200) throw new Error(`list: ${res.status} ${text.slice(0, 300)}`);
  return { ms, body: JSON.parse(text) };
}

/** Pids of the browse Pods' processes serving `world` (`felis files --serve --worlds-root <world>`). */
function browsePids(world: string): number[] {
  const out: number[] = [];
  for (const p of readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const args = readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0');
      if (args.includes('--serve') && args.includes(world) && args.some((a) => a.endsWith('felis.mjs'))) out.push(Number(p));
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return out;
}

/** Peak resident set of a process (VmHWM), in MiB. */
function peakRssMib(pid: number): number {
  const m = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : 0;
}

const t = performance.now();
const stack = await startBenchStack('list-page');
const warm: number[] = [];
const bare: number[] = [];
let rss = 0;
let firstMs = 0;
try {
  const big = join(stack.world, 'big');
  mkdirSync(big);
  log(`making ${ENTRIES} files… `);
  const made = spawnSync('sh', ['-c', `seq -f 'name-%07g.dat' 0 ${ENTRIES - 1} | xargs touch`], { cwd: big });
  if (made.status !== 0) throw new Error(`making the folder: ${made.stderr}`);
  log(`${r1((performance.now() - t) / 1000)} s\n`);
  // A folder changed within 2 s is not indexed (the racy rule); a world's big folders are older.
  await new Promise((r) => setTimeout(r, 2500));
  const fn = await stack.startFunction('files-list', { ...stack.env, FELIS_JOB_KEY_FILE: stack.keyFile });

  // The first pages start the session; the first that creates no Job is the Pod's first page of
  // the folder: a scan, after which the Pod builds the index.
  const warmUntil = performance.now() + 120_000;
  let first: Awaited<ReturnType<typeof page>>;
  for (;;) {
    stack.cluster.resetCounts();
    first = await page(fn.url);
    if ((stack.cluster.counts(FUNCTION_USER)['create jobs'] ?? 0) === 0 && browsePids(stack.world).length > 0) break;
    if (performance.now() > warmUntil) throw new Error('the session never came up');
  }
  firstMs = first.ms;
  const expected = JSON.stringify(Array.from({ length: 1000 }, (_, i) => `name-${String(Math.floor(ENTRIES / 2) + i).padStart(7, '0')}.dat`));
  if (JSON.stringify(first.body.entries.map((e) => e.name)) !== expected) throw new Error('the page is not the 1000 names after the middle one');
  // The index is built after that answer: wait for pages that no longer scan (or give up and measure anyway).
  const builtBy = performance.now() + 60_000;
  let fast = 0;
  while (fast < 2 && performance.now() < builtBy) fast = (await page(fn.url)).ms < first.ms / 3 ? fast + 1 : 0;
  for (let i = 0; i < RUNS; i++) {
    const w = await page(fn.url);
    if (JSON.stringify(w.body.entries.map((e) => e.name)) !== expected) throw new Error('a warm page is not the 1000 names after the middle one');
    warm.push(w.ms);
    const b0 = performance.now();
    const r = await execute({ op: 'list', path: 'big', worldsRoot: stack.world, limit: 1000, after: AFTER });
    bare.push(performance.now() - b0);
    if (r.entries?.length !== 1000) throw new Error(`the bare op answered ${r.entries?.length} entries`);
    log('.');
  }
  const pids = browsePids(stack.world);
  if (pids.length !== 1) throw new Error(`expected one browse process, found ${pids.length}`);
  rss = peakRssMib(pids[0]!);
} finally {
  await stack.close();
}

const out = {
  [`list_page_first_ms_${LABEL}`]: r1(firstMs),
  [`list_page_ms_p50_warm_${LABEL}`]: r1(median(warm)),
  [`list_page_ms_p50_bare_${LABEL}`]: r1(median(bare)),
  list_page_browse_rss_mib: r1(rss),
  list_page_entries: ENTRIES,
};
if (asJson) {
  console.log(JSON.stringify(out));
} else {
  process.stderr.write('\n');
  console.log(`files-list, a 1000-entry page from the middle of ${ENTRIES} entries, ${RUNS} runs each (${r1((performance.now() - t) / 1000)} s in all)`);
  console.log(`  first, through the browse Pod  ${out[`list_page_first_ms_${LABEL}`]} ms (scans; builds the index after)`);
  console.log(`  warm, through the browse Pod   p50 ${out[`list_page_ms_p50_warm_${LABEL}`]} ms`);
  console.log(`  the bare op, in this process   p50 ${out[`list_page_ms_p50_bare_${LABEL}`]} ms`);
  console.log(`  browse Pod peak RSS            ${out.list_page_browse_rss_mib} MiB`);
}
