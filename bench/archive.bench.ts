/**
 * `node bench/archive.bench.ts [--json] [--only 1k|100k|1m|1g|pack|pack100k]`: extraction throughput and peak
 * RSS of the Job program (the bundle, as the image runs it) against Info-ZIP `unzip` on the same archives (1k, 100k and 1M small
 * entries, one 1 GiB entry), and packing against `zip -r` (4,000 files of 64-256 KiB; 100,000 small
 * files), each archive we pack checked by `unzip -t`. Archives are generated under a temp dir
 * and deleted after. Installs Info-ZIP (Debian `unzip`, `zip`) when missing.
 */

import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ARCHIVE_NODE_OPTIONS } from '../lib/job-spec/render.ts';
import { HEAP_LIMITED_OPS } from '../lib/protocol/ops.ts';
import { buildJobProgram } from '../scripts/build.ts';
import { smallEntriesZip } from './zip-fixtures.ts';

const args = process.argv.slice(2);
const asJson = args.includes('--json');
const only = args.includes('--only') ? args[args.indexOf('--only') + 1] : undefined;
const program = fileURLToPath(new URL('../dist/felis.mjs', import.meta.url));
const log = (s: string) => (asJson ? process.stderr : process.stdout).write(s + '\n');

function ensurePeers(): void {
  const have = (b: string, arg: string) => spawnSync(b, [arg], { stdio: 'ignore' }).status === 0;
  if (have('unzip', '-v') && have('zip', '-v') && have(TIME, '--version')) return;
  log('installing Info-ZIP and GNU time (apt-get install -y unzip zip time)');
  execFileSync('apt-get', ['update'], { stdio: 'ignore' });
  execFileSync('apt-get', ['install', '-y', 'unzip', 'zip', 'time'], { stdio: 'ignore' });
}

const TIME = '/usr/bin/time';

/** Runs a command under GNU time: wall ms (around the whole process) and its peak RSS. */
function measured(cmd: string, argv: string[], env: NodeJS.ProcessEnv = process.env): { ms: number; rssMiB: number; out: string } {
  const t0 = performance.now();
  const r = spawnSync(TIME, ['-f', 'FELIS-BENCH-RSS-KIB %M', cmd, ...argv], { encoding: 'utf8', env, maxBuffer: 64 << 20 });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`${cmd} ${argv.join(' ')} failed: ${r.stderr}`);
  const kib = Number(/FELIS-BENCH-RSS-KIB (\d+)/.exec(r.stderr)?.[1]);
  return { ms, rssMiB: kib / 1024, out: r.stdout };
}

/** The Job program as the image runs it: the bundle, `felis files ...`, with the Job's NODE_OPTIONS. */
function felis(root: string, op: string, p: string): { ms: number; rssMiB: number } {
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  if ((HEAP_LIMITED_OPS as readonly string[]).includes(op)) env.NODE_OPTIONS = ARCHIVE_NODE_OPTIONS;
  const r = measured(process.execPath, [program, 'files', '--op', op, '--path', p, '--worlds-root', root], env);
  const last = r.out.trimEnd().split('\n').pop() ?? '';
  const result = JSON.parse(last.replace(/^FELIS-FILES-RESULT: /, '')) as { code?: string };
  if (result.code) throw new Error(`${op} refused: ${last}`);
  return { ms: r.ms, rssMiB: r.rssMiB };
}

/** Info-ZIP's test of every entry (CRC and sizes) of an archive we wrote. */
function testArchive(file: string): void {
  const r = spawnSync('unzip', ['-tq', file], { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`unzip -t ${file} failed: ${r.stdout.slice(-2000)}${r.stderr}`);
}

function removeTree(dir: string): void {
  spawnSync('rm', ['-rf', dir]);
}

const base = fs.mkdtempSync(path.join(os.tmpdir(), 'felis-archive-bench-'));
const results: Record<string, number> = {};
const rows: string[] = [];
try {
  ensurePeers();
  await buildJobProgram();
  const cases: [string, () => string][] = [
    ['1k', () => (smallEntriesZip(path.join(base, 'a.zip'), 1_000), 'a.zip')],
    ['100k', () => (smallEntriesZip(path.join(base, 'a.zip'), 100_000), 'a.zip')],
    ['1m', () => (smallEntriesZip(path.join(base, 'a.zip'), 1_000_000), 'a.zip')],
    [
      '1g',
      () => {
        const src = path.join(base, 'big');
        fs.mkdirSync(src);
        const block = randomBytes(1 << 20);
        const fd = fs.openSync(path.join(src, 'big.bin'), 'w');
        for (let i = 0; i < 1024; i++) {
          block[0] = i & 0xff;
          fs.writeSync(fd, block);
        }
        fs.closeSync(fd);
        execFileSync('zip', ['-q', '-1', '-j', path.join(base, 'a.zip'), path.join(src, 'big.bin')]);
        fs.rmSync(src, { recursive: true });
        return 'a.zip';
      },
    ],
  ];
  const ratios: number[] = [];
  for (const [label, make] of cases) {
    if (only && only !== label) continue;
    const archive = path.join(base, make());
    const size = fs.statSync(archive).size;
    const dest = path.join(base, 'w');
    fs.mkdirSync(dest);
    fs.linkSync(archive, path.join(dest, 'a.zip'));
    const o = felis(dest, 'unzip', 'a.zip');
    removeTree(dest);
    fs.mkdirSync(dest);
    const iz = measured('unzip', ['-q', archive, '-d', dest]);
    removeTree(dest);
    fs.rmSync(archive);
    const ratio = iz.ms / o.ms;
    ratios.push(ratio);
    results[`unzip_ratio_${label}`] = Number(ratio.toFixed(3));
    results[`unzip_ms_${label}`] = Math.round(o.ms);
    results[`infozip_unzip_ms_${label}`] = Math.round(iz.ms);
    results[`unzip_peak_rss_mib_${label === '1m' ? '1m_entries' : label}`] = Math.round(o.rssMiB);
    rows.push(
      `unzip ${label.padEnd(5)} archive ${(size / 2 ** 20).toFixed(1)} MiB: felis ${o.ms.toFixed(0)} ms (peak RSS ${o.rssMiB.toFixed(0)} MiB), Info-ZIP ${iz.ms.toFixed(0)} ms (peak RSS ${iz.rssMiB.toFixed(0)} MiB), ratio ${ratio.toFixed(2)}`,
    );
  }
  if (ratios.length > 0) {
    // The geometric mean of the per-case ratios (Info-ZIP time / ours): above 1 means faster.
    results.unzip_throughput_ratio_vs_infozip = Number(Math.exp(ratios.reduce((a, r) => a + Math.log(r), 0) / ratios.length).toFixed(3));
  }
  if (!only || only === 'pack') {
    const src = path.join(base, 'world');
    for (let d = 0; d < 20; d++) {
      fs.mkdirSync(path.join(src, `region${d}`), { recursive: true });
      const block = randomBytes(256 << 10);
      for (let f = 0; f < 200; f++) fs.writeFileSync(path.join(src, `region${d}`, `r.${f}.mca`), f % 2 ? block : Buffer.alloc(64 << 10, f));
    }
    const o = felis(base, 'zip', 'world');
    const oursMs = o.ms;
    const t1 = performance.now();
    spawnSync('zip', ['-q', '-r', '-1', path.join(base, 'iz.zip'), 'world'], { cwd: base });
    const izMs = performance.now() - t1;
    results.zip_peak_rss_mib = Math.round(o.rssMiB);
    results.zip_ms = Math.round(oursMs);
    results.infozip_zip_ms = Math.round(izMs);
    results.zip_throughput_ratio_vs_infozip = Number((izMs / oursMs).toFixed(3));
    testArchive(path.join(base, 'world.zip'));
    rows.push(`zip   4000 files (~640 MiB): felis ${oursMs.toFixed(0)} ms (peak RSS ${o.rssMiB.toFixed(0)} MiB), zip -r -1 ${izMs.toFixed(0)} ms, ratio ${(izMs / oursMs).toFixed(2)}`);
    removeTree(src);
  }
  if (!only || only === 'pack100k') {
    // Many small files: the packer's memory must not grow with the file count (zip64 end records past 65,535).
    const src = path.join(base, 'many');
    for (let d = 0; d < 100; d++) {
      fs.mkdirSync(path.join(src, `d${d}`), { recursive: true });
      for (let f = 0; f < 1000; f++) fs.writeFileSync(path.join(src, `d${d}`, `f${f}.txt`), `file ${d} ${f}\n`);
    }
    const o = felis(base, 'zip', 'many');
    testArchive(path.join(base, 'many.zip'));
    const t1 = performance.now();
    spawnSync('zip', ['-q', '-r', '-1', path.join(base, 'iz-many.zip'), 'many'], { cwd: base });
    const izMs = performance.now() - t1;
    results.zip_peak_rss_mib_100k_files = Math.round(o.rssMiB);
    results.zip_ms_100k_files = Math.round(o.ms);
    results.infozip_zip_ms_100k_files = Math.round(izMs);
    results.zip_ratio_100k_files = Number((izMs / o.ms).toFixed(3));
    rows.push(`zip   100,000 small files: felis ${o.ms.toFixed(0)} ms (peak RSS ${o.rssMiB.toFixed(0)} MiB), zip -r -1 ${izMs.toFixed(0)} ms, ratio ${(izMs / o.ms).toFixed(2)}`);
  }
} finally {
  removeTree(base);
}
if (asJson) console.log(JSON.stringify(results));
else for (const r of rows) console.log(r);
