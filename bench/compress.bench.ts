/**
 * `node bench/compress.bench.ts [--json] [--runs N] [--only zip|tar.gz|tar.xz|tar.zst]`: packing a
 * 10,000-file selection (three folders of one folder: 400 incompressible 128 KiB region-like
 * files, 4,600 small compressible data files, 5,000 small config files; about 70 MiB) with the Job
 * program (the bundle, as the image runs it, with the Job's NODE_OPTIONS) in each format, beside
 * the Debian tools at the same levels: `tar -c` through `gzip -1`, `xz -1 -T1`, `zstd -3 -T1`, and
 * `zip -r -1`. Medians of N runs (3 by default), the size of each archive against its input, and
 * peak RSS (GNU time). Each archive we make is checked by the reference tool (`tar -t` of the same
 * compressor, `unzip -t`) and must hold every file. Installs zip, unzip, zstd and GNU time when
 * missing.
 */

import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ARCHIVE_NODE_OPTIONS } from '../lib/job-spec/render.ts';
import { encodeBatchEnv } from '../lib/protocol/batch-env.ts';
import { PACK_FORMATS, type PackFormat } from '../lib/protocol/pack-format.ts';
import { buildJobProgram } from '../scripts/build.ts';
import { median, numberArg } from './support.ts';

const args = process.argv.slice(2);
const asJson = args.includes('--json');
const runs = numberArg(args, '--runs', 3);
const only = args.includes('--only') ? args[args.indexOf('--only') + 1] : undefined;
const program = fileURLToPath(new URL('../dist/felis.mjs', import.meta.url));
const log = (s: string) => (asJson ? process.stderr : process.stdout).write(s + '\n');
const TIME = '/usr/bin/time';

function ensurePeers(): void {
  const have = (b: string, arg: string) => spawnSync(b, [arg], { stdio: 'ignore' }).status === 0;
  if (have('zip', '-v') && have('unzip', '-v') && have('zstd', '--version') && have('xz', '--version') && have(TIME, '--version')) return;
  log('installing zip, unzip, zstd, xz-utils and GNU time (apt-get install -y zip unzip zstd xz-utils time)');
  execFileSync('apt-get', ['update'], { stdio: 'ignore' });
  execFileSync('apt-get', ['install', '-y', 'zip', 'unzip', 'zstd', 'xz-utils', 'time'], { stdio: 'ignore' });
}

/** Wall ms around the whole process and its peak RSS, under GNU time. */
function measured(cmd: string, argv: string[], opts: { env?: NodeJS.ProcessEnv; cwd?: string } = {}): { ms: number; rssMiB: number; out: string } {
  const t0 = performance.now();
  const r = spawnSync(TIME, ['-f', 'FELIS-BENCH-RSS-KIB %M', cmd, ...argv], { encoding: 'utf8', env: opts.env ?? process.env, cwd: opts.cwd, maxBuffer: 64 << 20 });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`${cmd} ${argv.join(' ')} failed: ${r.stderr}`);
  return { ms, rssMiB: Number(/FELIS-BENCH-RSS-KIB (\d+)/.exec(r.stderr)?.[1]) / 1024, out: r.stdout };
}

const SELECTION = ['region', 'data', 'plugins'];

/** The selection: 10,000 files in three folders of `root`, and their total size. */
function makeSelection(root: string): number {
  let total = 0;
  const put = (rel: string, b: Buffer) => {
    fs.writeFileSync(path.join(root, rel), b);
    total += b.length;
  };
  fs.mkdirSync(path.join(root, 'region'), { recursive: true });
  for (let i = 0; i < 400; i++) put(`region/r.${i % 20}.${Math.floor(i / 20)}.mca`, randomBytes(128 << 10));
  for (let d = 0; d < 46; d++) {
    fs.mkdirSync(path.join(root, `data/d${d}`), { recursive: true });
    for (let i = 0; i < 100; i++)
      put(
        `data/d${d}/player-${d}-${i}.json`,
        Buffer.from(
          JSON.stringify({ id: `${d}-${i}`, pos: [d * 16, 64, i * 16], inventory: Array.from({ length: 40 }, (_, k) => ({ slot: k, item: `minecraft:stone_${k % 7}`, count: (k * 13) % 64 })) }),
        ),
      );
  }
  for (let p = 0; p < 50; p++) {
    fs.mkdirSync(path.join(root, `plugins/Plugin${p}`), { recursive: true });
    for (let i = 0; i < 100; i++)
      put(`plugins/Plugin${p}/config-${i}.yml`, Buffer.from(`# plugin ${p}\nenabled: true\nmessages:\n${Array.from({ length: 20 }, (_, k) => `  key${k}: "value ${p} ${i} ${k}"`).join('\n')}\n`));
  }
  return total;
}

const ENDING: Record<PackFormat, string> = { zip: 'zip', 'tar.gz': 'tar.gz', 'tar.xz': 'tar.xz', 'tar.zst': 'tar.zst' };
/** The reference tool at our level for each format, as one argv, run in the selection's folder. */
const REFERENCE: Record<PackFormat, (out: string) => [string, string[]]> = {
  zip: (out) => ['zip', ['-q', '-r', '-1', out, ...SELECTION]],
  'tar.gz': (out) => ['tar', ['-I', 'gzip -1', '-cf', out, ...SELECTION]],
  'tar.xz': (out) => ['tar', ['-I', 'xz -1 -T1', '-cf', out, ...SELECTION]],
  'tar.zst': (out) => ['tar', ['-I', 'zstd -3 -T1', '-cf', out, ...SELECTION]],
};
const TEST: Record<Exclude<PackFormat, 'zip'>, string> = { 'tar.gz': 'gzip -d', 'tar.xz': 'xz -d', 'tar.zst': 'zstd -d' };

function felis(root: string, format: PackFormat, name: string): { ms: number; rssMiB: number } {
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_OPTIONS: ARCHIVE_NODE_OPTIONS };
  for (const v of encodeBatchEnv({ paths: SELECTION })!) env[v.name] = v.value;
  const r = measured(process.execPath, [program, 'files', '--op', 'compress', '--path', '.', '--worlds-root', root, '--format', format, '--to', name], { env });
  const last = r.out.trimEnd().split('\n').pop() ?? '';
  const result = JSON.parse(last.replace(/^FELIS-FILES-RESULT: /, '')) as { code?: string; files?: number };
  if (result.code || result.files !== 10_000) throw new Error(`compress ${format}: ${last}`);
  return { ms: r.ms, rssMiB: r.rssMiB };
}

/** The reference tool reads every entry of our archive; the count of files must be the selection's. */
function check(file: string, format: PackFormat): void {
  if (format === 'zip') {
    const r = spawnSync('unzip', ['-tq', file], { encoding: 'utf8', maxBuffer: 64 << 20 });
    if (r.status !== 0) throw new Error(`unzip -t ${file}: ${r.stdout.slice(-2000)}${r.stderr}`);
    return;
  }
  const list = execFileSync('tar', ['-I', TEST[format], '-tvf', file], { encoding: 'utf8', maxBuffer: 64 << 20 });
  const files = list.split('\n').filter((l) => l.startsWith('-')).length;
  if (files !== 10_000) throw new Error(`${file}: tar lists ${files} files, not 10000`);
}

const base = fs.mkdtempSync(path.join(os.tmpdir(), 'felis-compress-bench-'));
const results: Record<string, number> = {};
const rows: string[] = [];
try {
  ensurePeers();
  await buildJobProgram();
  const root = path.join(base, 'w');
  fs.mkdirSync(root);
  const input = makeSelection(root);
  log(`selection: 10,000 files, ${(input / 2 ** 20).toFixed(1)} MiB; ${runs} runs each`);
  for (const format of PACK_FORMATS) {
    if (only && only !== format) continue;
    const ours: { ms: number; rssMiB: number }[] = [];
    const ref: { ms: number; rssMiB: number }[] = [];
    let oursSize = 0;
    let refSize = 0;
    for (let i = 0; i < runs; i++) {
      const name = `ours.${ENDING[format]}`;
      ours.push(felis(root, format, name));
      oursSize = fs.statSync(path.join(root, name)).size;
      if (i === 0) check(path.join(root, name), format);
      fs.rmSync(path.join(root, name));
      const out = path.join(base, `ref.${ENDING[format]}`);
      const [cmd, argv] = REFERENCE[format](out);
      ref.push(measured(cmd, argv, { cwd: root }));
      refSize = fs.statSync(out).size;
      fs.rmSync(out);
    }
    const ms = median(ours.map((o) => o.ms));
    const refMs = median(ref.map((o) => o.ms));
    const rss = Math.max(...ours.map((o) => o.rssMiB));
    const refRss = Math.max(...ref.map((o) => o.rssMiB));
    const key = format.replace('.', '_');
    results[`compress_${key}_ms`] = Math.round(ms);
    results[`compress_${key}_reference_ms`] = Math.round(refMs);
    results[`compress_${key}_ratio_vs_reference`] = Number((refMs / ms).toFixed(3));
    results[`compress_${key}_peak_rss_mib`] = Math.round(rss);
    results[`compress_${key}_size_ratio`] = Number((oursSize / input).toFixed(4));
    results[`compress_${key}_reference_size_ratio`] = Number((refSize / input).toFixed(4));
    const [cmd, argv] = REFERENCE[format]('out');
    rows.push(
      `${format.padEnd(7)} felis ${ms.toFixed(0)} ms (peak RSS ${rss.toFixed(0)} MiB, size ${(oursSize / input).toFixed(3)} of input) · ${cmd} ${argv.slice(0, -SELECTION.length - 1).join(' ')} ${refMs.toFixed(0)} ms (peak RSS ${refRss.toFixed(0)} MiB, size ${(refSize / input).toFixed(3)}) · speed ratio ${(refMs / ms).toFixed(2)}`,
    );
  }
} finally {
  spawnSync('rm', ['-rf', base]);
}
if (asJson) console.log(JSON.stringify(results));
else for (const r of rows) console.log(r);
