/**
 * `node bench/search.bench.ts [--json] [--runs N] [--size N]`: a search by name through the
 * files-search function, end to end over HTTP, answered by a warm browse Pod, over a tree of
 * `--size` entries (folders of 1000 files; default 100,000), beside `find <tree> -iname '*q*'` on
 * the same tree. The two are interleaved, so a busy machine skews both alike. The query matches
 * about one name in a thousand, so both walk the whole tree (nothing stops early).
 */
import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH_TOKEN, median, numberArg, startBenchStack } from './support.ts';

const argv = process.argv.slice(2);
const asJson = argv.includes('--json');
const RUNS = numberArg(argv, '--runs', 10);
const SIZE = numberArg(argv, '--size', 100_000);
const PER_FOLDER = 1000;
const TREE = 'bench-search';
const Q = 'needle';
const FUNCTION_USER = 'system:serviceaccount:minecraft:felis-world';
/** `100k` for 100,000: the keys name the size they were measured at. */
const label = SIZE % 1000 === 0 ? `${SIZE / 1000}k` : String(SIZE);

const r1 = (x: number) => Math.round(x * 10) / 10;

/** `size` empty files in folders of PER_FOLDER; every 997th is named with the query, in mixed case. */
function makeTree(dir: string, size: number): number {
  let matching = 0;
  for (let f = 0; f * PER_FOLDER < size; f++) {
    const folder = join(dir, `d${String(f).padStart(4, '0')}`);
    mkdirSync(folder, { recursive: true });
    for (let i = 0; i < PER_FOLDER && f * PER_FOLDER + i < size; i++) {
      const hit = (f * PER_FOLDER + i) % 997 === 0;
      if (hit) matching++;
      closeSync(openSync(join(folder, `${hit ? 'NeedLe' : 'file'}-${i}.dat`), 'w'));
    }
  }
  return matching;
}

const t = performance.now();
const stack = await startBenchStack('search');
const warm: number[] = [];
const find: number[] = [];
let matches = 0;
try {
  const tree = join(stack.world, TREE);
  const expected = makeTree(tree, SIZE);
  if (!asJson) process.stderr.write(`a tree of ${SIZE} files made in ${r1((performance.now() - t) / 1000)} s\n`);
  const fn = await stack.startFunction('files-search', { ...stack.env, FELIS_JOB_KEY_FILE: stack.keyFile });
  const url = `${fn.url}/api/v1/servers/survival/files/search?path=${TREE}&q=${Q}&limit=1000`;
  const search = async (): Promise<{ ms: number; body: { matches: unknown[]; truncated: boolean } }> => {
    const t0 = performance.now();
    const res = await fetch(url, { headers: { authorization: `Bearer ${BENCH_TOKEN}` }, signal: AbortSignal.timeout(60_000) });
    const text = await res.text();
    const ms = performance.now() - t0;
    if (res.status !== 200) throw new Error(`search: ${res.status} ${text}`);
    return { ms, body: JSON.parse(text) };
  };
  // The first searches start the session; measure only once one is answered without a Job.
  const warmUntil = performance.now() + 60_000;
  for (;;) {
    stack.cluster.resetCounts();
    await search();
    if ((stack.cluster.counts(FUNCTION_USER)['create jobs'] ?? 0) === 0) break;
    if (performance.now() > warmUntil) throw new Error('the browse session never came up');
  }
  const findOnce = (): { ms: number; lines: number } => {
    const t0 = performance.now();
    const out = execFileSync('find', [tree, '-iname', `*${Q}*`], { encoding: 'utf8', maxBuffer: 64 << 20 });
    return { ms: performance.now() - t0, lines: out.split('\n').filter(Boolean).length };
  };
  findOnce();
  for (let i = 0; i < RUNS; i++) {
    const s = await search();
    const f = findOnce();
    if (s.body.truncated || s.body.matches.length !== expected || f.lines !== expected) {
      throw new Error(`search found ${s.body.matches.length} (truncated: ${s.body.truncated}), find ${f.lines}, expected ${expected}`);
    }
    matches = s.body.matches.length;
    warm.push(s.ms);
    find.push(f.ms);
    if (!asJson) process.stderr.write('.');
  }
} finally {
  await stack.close();
}

const out = {
  [`search_ms_p50_warm_${label}`]: r1(median(warm)),
  [`find_ms_p50_${label}`]: r1(median(find)),
  search_vs_find_ratio: Math.round((median(warm) / median(find)) * 100) / 100,
};
if (asJson) {
  console.log(JSON.stringify(out));
} else {
  process.stderr.write('\n');
  console.log(`files-search over ${SIZE} entries, ${RUNS} searches each, interleaved (${r1((performance.now() - t) / 1000)} s in all; ${matches} matches)`);
  console.log(`  through a warm browse Pod   p50 ${out[`search_ms_p50_warm_${label}`]} ms`);
  console.log(`  find -iname                 p50 ${out[`find_ms_p50_${label}`]} ms`);
  console.log(`  ratio                       ${out.search_vs_find_ratio}x (target: at most 2)`);
}
