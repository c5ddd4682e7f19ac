/**
 * `node bench/files-region.bench.ts [--json] [--runs N] [--regions N] [--chunks N]`: a prune of
 * `--regions` region files (default 16) of `--chunks` chunks each (default 512, zlib, a few KiB of
 * real NBT each), every other chunk below the bound, each with an entities/ and a poi/ file of the
 * same chunks: the dry run (region-plan) and the prune (region-prune, staged, journaled, placed,
 * the trash off) through the Job program's dispatch, in this process. The world is made afresh
 * under the system's temp folder for each run and removed after; the medians of N runs (default 3)
 * are reported, with MiB of region files read per second.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pruneWorldOf } from '../functions/files-region/region.test-kit.ts';
import { execute } from '../job/dispatch/execute.ts';
import { DEFAULT_TRASH_SECONDS } from '../lib/protocol/trash-env.ts';
import { median, numberArg } from './support.ts';

const argv = process.argv.slice(2);
const asJson = argv.includes('--json');
const RUNS = numberArg(argv, '--runs', 3);
const REGIONS = numberArg(argv, '--regions', 16);
const CHUNKS = numberArg(argv, '--chunks', 512);
const log = (s: string) => (asJson ? process.stderr : process.stdout).write(`${s}\n`);
const trash = { enabled: false, seconds: DEFAULT_TRASH_SECONDS, actor: '' };

const plans: number[] = [];
const prunes: number[] = [];
let bytes = 0;
let freed = 0;
for (let run = 0; run < RUNS; run++) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'felis-region-bench-'));
  try {
    bytes = pruneWorldOf(path.join(root, 'world'), REGIONS, CHUNKS);
    let t0 = performance.now();
    const plan = await execute({ op: 'region-plan', path: 'world', below: '1000', worldsRoot: root }, { trash });
    plans.push(performance.now() - t0);
    if (plan.code) throw new Error(JSON.stringify(plan));
    t0 = performance.now();
    const r = await execute({ op: 'region-prune', path: 'world', below: '1000', worldsRoot: root }, { trash });
    prunes.push(performance.now() - t0);
    if (r.code || r.files !== REGIONS) throw new Error(JSON.stringify(r).slice(0, 500));
    freed = r.bytes ?? 0;
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}
const mib = bytes / 2 ** 20;
const out = {
  [`region_plan_${REGIONS}x${CHUNKS}_ms`]: Math.round(median(plans)),
  [`region_prune_${REGIONS}x${CHUNKS}_ms`]: Math.round(median(prunes)),
  region_files_mib: Math.round(mib * 10) / 10,
  region_freed_mib: Math.round((freed / 2 ** 20) * 10) / 10,
};
log(`region prune, ${REGIONS} region files of ${CHUNKS} chunks (${out.region_files_mib} MiB with entities/ and poi/), median of ${RUNS}:`);
log(
  `  dry run ${out[`region_plan_${REGIONS}x${CHUNKS}_ms`]} ms, prune ${out[`region_prune_${REGIONS}x${CHUNKS}_ms`]} ms (${out.region_freed_mib} MiB freed; ${Math.round(mib / (median(prunes) / 1000))} MiB/s)`,
);
if (asJson) console.log(JSON.stringify(out));
