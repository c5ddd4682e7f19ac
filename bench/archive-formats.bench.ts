/**
 * `node bench/archive-formats.bench.ts [--json] [--runs N] [--only tar-1k|tar-100k|tar-1m|single] [--codec gzip|bzip2|xz|zstd]`:
 * extraction by the Job program (the bundle, as the image runs it, with the Job's NODE_OPTIONS)
 * beside the Debian tool for each format, on the same files in the same place:
 *
 * - a tar of 1k / 100k (and, with `--only tar-1m`, 1M) small entries in gzip, bzip2, xz and zstd
 *   against `tar -x` with `-z`, `-j`, `-J`, `--zstd`;
 * - one 64 MiB file (base64 text, compressible like logs) as single .gz/.bz2/.xz/.zst against
 *   `gzip -dc`, `bzip2 -dc`, `xz -dc`, `zstd -dc` writing to a file.
 *
 * Wall time and peak RSS (GNU time's %M) per run, medians of `--runs` (3), and the ratio
 * tool time / our time (≥ 1 is faster than the tool). Installs what is missing with apt-get.
 */

import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { forgeTar } from '../job/archive/forge.test-kit.ts';
import { ARCHIVE_NODE_OPTIONS } from '../lib/job-spec/render.ts';
import { buildJobProgram } from '../scripts/build.ts';
import { median, numberArg } from './support.ts';

const args = process.argv.slice(2);
const asJson = args.includes('--json');
const runs = numberArg(args, '--runs', 3);
const only = args.includes('--only') ? args[args.indexOf('--only') + 1] : undefined;
/** One codec only (a 1M-entry run of all four takes most of an hour). */
const codec = args.includes('--codec') ? args[args.indexOf('--codec') + 1] : undefined;
const program = fileURLToPath(new URL('../dist/felis.mjs', import.meta.url));
const log = (s: string) => (asJson ? process.stderr : process.stdout).write(s + '\n');
const TIME = '/usr/bin/time';

const CODECS = [
  { name: 'gzip', tarEnding: '.tar.gz', single: '.gz', compress: ['gzip', '-6'], tarFlag: '-z', cat: 'gzip' },
  { name: 'bzip2', tarEnding: '.tar.bz2', single: '.bz2', compress: ['bzip2', '-9'], tarFlag: '-j', cat: 'bzip2' },
  { name: 'xz', tarEnding: '.tar.xz', single: '.xz', compress: ['xz', '-6', '-T1'], tarFlag: '-J', cat: 'xz' },
  { name: 'zstd', tarEnding: '.tar.zst', single: '.zst', compress: ['zstd', '-3', '-q'], tarFlag: '--zstd', cat: 'zstd' },
].filter((c) => !codec || c.name === codec);

function ensureTools(): void {
  const have = (b: string) => spawnSync(b, ['--version'], { stdio: 'ignore' }).status === 0;
  const missing = ['gzip', 'bzip2', 'xz-utils', 'zstd', 'tar', 'time'].filter((p) => !have(p === 'xz-utils' ? 'xz' : p === 'time' ? TIME : p));
  if (missing.length === 0) return;
  log(`installing ${missing.join(' ')} (apt-get install -y)`);
  execFileSync('apt-get', ['update'], { stdio: 'ignore' });
  execFileSync('apt-get', ['install', '-y', ...missing], { stdio: 'ignore' });
}

/** Runs a command under GNU time: wall ms and peak RSS; `stdoutTo` takes its output. */
function measured(cmd: string, argv: string[], opts: { env?: NodeJS.ProcessEnv; stdoutTo?: string } = {}): { ms: number; rssMiB: number; out: string } {
  const out = opts.stdoutTo ? fs.openSync(opts.stdoutTo, 'w') : 'pipe';
  const t0 = performance.now();
  const r = spawnSync(TIME, ['-f', 'FELIS-BENCH-RSS-KIB %M', cmd, ...argv], { encoding: 'utf8', env: opts.env ?? process.env, maxBuffer: 64 << 20, stdio: ['ignore', out, 'pipe'] });
  const ms = performance.now() - t0;
  if (typeof out === 'number') fs.closeSync(out);
  if (r.status !== 0) throw new Error(`${cmd} ${argv.join(' ')} failed: ${r.stderr}`);
  return { ms, rssMiB: Number(/FELIS-BENCH-RSS-KIB (\d+)/.exec(r.stderr)?.[1]) / 1024, out: r.stdout ?? '' };
}

function felis(root: string, p: string): { ms: number; rssMiB: number } {
  const env = { ...process.env, NODE_OPTIONS: ARCHIVE_NODE_OPTIONS };
  const r = measured(process.execPath, [program, 'files', '--op', 'unzip', '--path', p, '--worlds-root', root], { env });
  const last = r.out.trimEnd().split('\n').pop() ?? '';
  if (/"code"/.test(last)) throw new Error(`unzip refused: ${last}`);
  return { ms: r.ms, rssMiB: r.rssMiB };
}

/** A tar of `n` small entries in 1000 folders, written in batches (never whole in memory). */
function smallEntriesTar(file: string, n: number): void {
  const fd = fs.openSync(file, 'w');
  for (let i = 0; i < n; i += 1000) {
    const batch = [];
    for (let j = i; j < Math.min(n, i + 1000); j++) batch.push({ name: `d${Math.floor(j / 1000)}/f${j}.txt`, data: `entry ${j} `.repeat(8) });
    const t = forgeTar(batch);
    fs.writeSync(fd, t, 0, t.length - 1024); // each batch without the end-of-archive blocks
  }
  fs.writeSync(fd, Buffer.alloc(1024));
  fs.closeSync(fd);
}

const base = fs.mkdtempSync(path.join(os.tmpdir(), 'felis-formats-bench-'));
const results: Record<string, number> = {};
const rows: string[] = ['| case | felis | tool | ratio (tool/felis) | felis peak RSS | tool peak RSS |', '| --- | ---: | ---: | ---: | ---: | ---: |'];
const rm = (p: string) => spawnSync('rm', ['-rf', p]);

function side(label: string, ours: () => { ms: number; rssMiB: number }, theirs: () => { ms: number; rssMiB: number }): void {
  const o: { ms: number; rssMiB: number }[] = [];
  const t: { ms: number; rssMiB: number }[] = [];
  for (let r = 0; r < runs; r++) {
    o.push(ours());
    t.push(theirs());
  }
  const om = median(o.map((x) => x.ms));
  const tm = median(t.map((x) => x.ms));
  const orss = Math.max(...o.map((x) => x.rssMiB));
  const trss = Math.max(...t.map((x) => x.rssMiB));
  const ratio = tm / om;
  Object.assign(results, { [`${label}_ms`]: Math.round(om), [`${label}_tool_ms`]: Math.round(tm), [`${label}_ratio`]: Number(ratio.toFixed(2)), [`${label}_rss_mib`]: Math.round(orss) });
  const row = `| ${label} | ${(om / 1000).toFixed(2)} s | ${(tm / 1000).toFixed(2)} s | ${ratio.toFixed(2)} | ${orss.toFixed(0)} MiB | ${trss.toFixed(0)} MiB |`;
  rows.push(row);
  log(row);
}

try {
  ensureTools();
  await buildJobProgram();
  const tarCases: [string, number][] = [
    ['tar-1k', 1_000],
    ['tar-100k', 100_000],
    ['tar-1m', 1_000_000],
  ];
  for (const [label, n] of tarCases) {
    if (only ? only !== label : label === 'tar-1m') continue;
    const plain = path.join(base, 'a.tar');
    smallEntriesTar(plain, n);
    for (const c of CODECS) {
      const archive = path.join(base, `a${c.tarEnding}`);
      execFileSync('sh', ['-c', `${c.compress.join(' ')} -c "$1" > "$2"`, 'sh', plain, archive]);
      const dest = path.join(base, 'w');
      side(
        `${label}_${c.name}`,
        () => {
          rm(dest);
          fs.mkdirSync(dest);
          fs.linkSync(archive, path.join(dest, `a${c.tarEnding}`));
          const r = felis(dest, `a${c.tarEnding}`);
          rm(dest);
          return r;
        },
        () => {
          rm(dest);
          fs.mkdirSync(dest);
          const r = measured('tar', ['-x', c.tarFlag, '-f', archive, '-C', dest]);
          rm(dest);
          return r;
        },
      );
      fs.rmSync(archive);
    }
    fs.rmSync(plain);
  }

  if (!only || only === 'single') {
    const plain = path.join(base, 'big.log');
    const fd = fs.openSync(plain, 'w');
    for (let i = 0; i < 48; i++)
      fs.writeSync(
        fd,
        randomBytes(1 << 20)
          .toString('base64')
          .slice(0, ((1 << 20) * 4) / 3),
      );
    fs.closeSync(fd);
    for (const c of CODECS) {
      const file = path.join(base, `big.log${c.single}`);
      execFileSync('sh', ['-c', `${c.compress.join(' ')} -c "$1" > "$2"`, 'sh', plain, file]);
      const dest = path.join(base, 'w');
      side(
        `single_${c.name}`,
        () => {
          rm(dest);
          fs.mkdirSync(dest);
          fs.linkSync(file, path.join(dest, `big.log${c.single}`));
          const r = felis(dest, `big.log${c.single}`);
          rm(dest);
          return r;
        },
        () => {
          rm(dest);
          fs.mkdirSync(dest);
          const r = measured(c.cat, ['-dc', file], { stdoutTo: path.join(dest, 'big.log') });
          rm(dest);
          return r;
        },
      );
      fs.rmSync(file);
    }
  }
  if (asJson) console.log(JSON.stringify(results));
  else log(`\n${rows.join('\n')}`);
} finally {
  rm(base);
}
