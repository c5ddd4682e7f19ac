/**
 * `node bench/archive-7z.bench.ts [--json] [--only 7z-1k|7z-100k|rar-1k|rar-100k] [--runs N]`: `.7z` and
 * `.rar` extraction throughput and peak RSS of the Job program (the bundle, as the image runs it,
 * with the Job's NODE_OPTIONS) beside Debian's 7-Zip (`7zz x`) for 7z and `unar` for RAR (Debian's 7-Zip has no RAR: its unRAR code is not free), on the same
 * archives: 1,000 and 100,000 small entries in 1,000-entry folders, stored (the test kit's forgers:
 * no free tool writes RAR). Median of N runs (default 3) each; ratio = reference time / ours (above
 * 1: faster). Prints the entry limit past which both are refused (too_large). Installs `7zip`, `unar` and GNU `time` with apt-get when missing.
 */

import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { forge7z } from '../job/archive/7z.test-kit.ts';
import type { ForgedTar } from '../job/archive/forge.test-kit.ts';
import { forgeRar5 } from '../job/archive/rar.test-kit.ts';
import { MAX_ENTRIES } from '../job/archive/sevenzip-pass.ts';
import { ARCHIVE_NODE_OPTIONS } from '../lib/job-spec/render.ts';
import { buildJobProgram } from '../scripts/build.ts';

const args = process.argv.slice(2);
const asJson = args.includes('--json');
const only = args.includes('--only') ? args[args.indexOf('--only') + 1] : undefined;
const runs = args.includes('--runs') ? Number(args[args.indexOf('--runs') + 1]) : 3;
const program = fileURLToPath(new URL('../dist/felis.mjs', import.meta.url));
const log = (s: string) => (asJson ? process.stderr : process.stdout).write(s + '\n');
const TIME = '/usr/bin/time';

function ensurePeers(): void {
  const have = (b: string, arg: string) => spawnSync(b, [arg], { stdio: 'ignore' }).error === undefined && spawnSync(b, [arg], { stdio: 'ignore' }).status !== 127;
  if (have('7zz', 'i') && have('unar', '-v') && have(TIME, '--version')) return;
  log('installing 7-Zip, unar and GNU time (apt-get install -y 7zip unar time)');
  execFileSync('apt-get', ['update'], { stdio: 'ignore' });
  execFileSync('apt-get', ['install', '-y', '7zip', 'unar', 'time'], { stdio: 'ignore' });
}

function measured(cmd: string, argv: string[], env: NodeJS.ProcessEnv = process.env): { ms: number; rssMiB: number; out: string } {
  const t0 = performance.now();
  const r = spawnSync(TIME, ['-f', 'FELIS-BENCH-RSS-KIB %M', cmd, ...argv], { encoding: 'utf8', env, maxBuffer: 64 << 20 });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`${cmd} ${argv.join(' ')} failed: ${r.stderr.slice(-2000)}`);
  const kib = Number(/FELIS-BENCH-RSS-KIB (\d+)/.exec(r.stderr)?.[1]);
  return { ms, rssMiB: kib / 1024, out: r.stdout };
}

function felis(root: string, p: string): { ms: number; rssMiB: number } {
  const env = { ...process.env, NODE_OPTIONS: ARCHIVE_NODE_OPTIONS };
  const r = measured(process.execPath, [program, 'files', '--op', 'unzip', '--path', p, '--worlds-root', root], env);
  const last = r.out.trimEnd().split('\n').pop() ?? '';
  const result = JSON.parse(last.replace(/^FELIS-FILES-RESULT: /, '')) as { code?: string };
  if (result.code) throw new Error(`unzip refused: ${last}`);
  return { ms: r.ms, rssMiB: r.rssMiB };
}

function entries(n: number): ForgedTar[] {
  return Array.from({ length: n }, (_, i) => ({ name: `d${Math.floor(i / 1000)}/f${i}.txt`, data: `entry ${i} `.repeat(8) }));
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const base = fs.mkdtempSync(path.join(os.tmpdir(), 'felis-7z-bench-'));
const results: Record<string, number> = {};
const rows: string[] = [];
try {
  ensurePeers();
  await buildJobProgram();
  const cases: [string, number, '7z' | 'rar'][] = [
    ['7z-1k', 1_000, '7z'],
    ['7z-100k', 100_000, '7z'],
    ['rar-1k', 1_000, 'rar'],
    ['rar-100k', 100_000, 'rar'],
  ];
  for (const [label, n, ending] of cases) {
    if (only && only !== label) continue;
    const archive = path.join(base, `a.${ending}`);
    fs.writeFileSync(archive, ending === '7z' ? forge7z(entries(n)) : forgeRar5(entries(n)));
    const dest = path.join(base, 'w');
    const ours: { ms: number; rssMiB: number }[] = [];
    const sevenZip: number[] = [];
    const unar: number[] = [];
    for (let r = 0; r < runs; r++) {
      fs.mkdirSync(dest);
      fs.linkSync(archive, path.join(dest, `a.${ending}`));
      ours.push(felis(dest, `a.${ending}`));
      spawnSync('rm', ['-rf', dest]);
      // Debian's 7-Zip is built without RARLAB's unRAR code (dfsg): for .rar the reference is unar alone.
      if (ending === '7z') {
        fs.mkdirSync(dest);
        sevenZip.push(measured('7zz', ['x', '-y', '-bd', `-o${dest}`, archive]).ms);
        spawnSync('rm', ['-rf', dest]);
      } else {
        fs.mkdirSync(dest);
        unar.push(measured('unar', ['-q', '-f', '-o', dest, archive]).ms);
        spawnSync('rm', ['-rf', dest]);
      }
    }
    fs.rmSync(archive);
    const ms = median(ours.map((o) => o.ms));
    const rss = Math.max(...ours.map((o) => o.rssMiB));
    const ref = ending === 'rar' ? median(unar) : median(sevenZip);
    const key = label.replace('-', '_');
    results[`${key}_ms`] = Math.round(ms);
    results[`${key}_peak_rss_mib`] = Math.round(rss);
    results[`${key}_ratio_vs_${ending === 'rar' ? 'unar' : '7zz'}`] = Number((ref / ms).toFixed(2));
    rows.push(
      `${label.padEnd(9)} felis ${ms.toFixed(0)} ms (peak RSS ${rss.toFixed(0)} MiB), ${ending === 'rar' ? 'unar' : '7zz'} ${ref.toFixed(0)} ms` +
        `, ratio ${(ref / ms).toFixed(2)} (median of ${runs})`,
    );
  }
} finally {
  fs.rmSync(base, { recursive: true, force: true });
}
// 7-Zip holds a whole header database in the Job's heap: past this count the Job refuses, so there is no 1M figure.
results.entry_limit = MAX_ENTRIES;
rows.push(`limit: a .7z or .rar listing more than ${MAX_ENTRIES} entries is refused with too_large (no 1M-entry run)`);
if (asJson) console.log(JSON.stringify(results));
else for (const r of rows) log(r);
