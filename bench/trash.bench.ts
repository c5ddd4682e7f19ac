/**
 * `node bench/trash.bench.ts [--json] [--runs N] [--files N]`: what the undo trash (job/trash/)
 * costs a delete, and what an undo costs. The Job program (the bundle, as the image runs it, a
 * process per op) deletes a folder of N files (default 10,000: small files of varied size and mode
 * in three levels of folders, some of them empty, built fresh for every run in a temp world on the
 * same disk) with `FELIS_TRASH=off`, and the same folder with the trash on; then restores that
 * record (`--op trash-restore --trash-id <id>`) and checks the tree is byte-identical to the one
 * before the delete (a digest of every path, mode, size and content: it fails loudly if not).
 * The Job program's floor is `--op list` of an empty folder. Runs alternate which side goes first,
 * so drift hits both; each op starts on a synced disk (what building the tree left dirty is not
 * its cost). One warm-up round first (not counted). Medians of `--runs` (default 5).
 *
 * Keys: `plain_delete_ms`, `trash_delete_ms`, `trash_delete_ratio` (trash / plain; target ≤ 1.2),
 * `trash_restore_ms`, `job_start_ms`, `trash_restore_beyond_start_ms` (restore − start; target ≤
 * 1000), `trash_files` (the size run).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { treeDigest } from '../job/archive/forge.test-kit.ts';
import { buildJobProgram } from '../scripts/build.ts';
import { median, numberArg, prng } from './support.ts';

const argv = process.argv.slice(2);
const asJson = argv.includes('--json');
const RUNS = numberArg(argv, '--runs', 5);
const FILES = numberArg(argv, '--files', 10_000);
if (!(RUNS >= 1 && Number.isInteger(RUNS))) throw new Error('--runs takes a whole number ≥ 1');
if (!(FILES >= 1 && Number.isInteger(FILES))) throw new Error('--files takes a whole number ≥ 1');
const program = fileURLToPath(new URL('../dist/felis.mjs', import.meta.url));
const r1 = (x: number) => Math.round(x * 10) / 10;
const r2 = (x: number) => Math.round(x * 100) / 100;
const log = (s: string) => (asJson ? process.stderr : process.stdout).write(s + '\n');

/**
 * `files` files under `dir`: 10 folders of 10 folders, every other one of those with 4 folders
 * more (a few levels), files spread over all of them, sizes 0 B – 16 KiB (most under 4 KiB), a few
 * 0600 or 0755, and a few empty folders. Each file's bytes are its own (its index in front).
 */
function buildTree(dir: string, files: number): void {
  const rand = prng(23);
  const folders: string[] = [];
  fs.mkdirSync(dir);
  for (let a = 0; a < 10; a++) {
    const pa = path.join(dir, `d${a}`);
    fs.mkdirSync(pa);
    folders.push(pa);
    for (let b = 0; b < 10; b++) {
      const pb = path.join(pa, `s${b}`);
      fs.mkdirSync(pb);
      folders.push(pb);
      if (b % 2 === 0) {
        for (let c = 0; c < 4; c++) {
          const pc = path.join(pb, `t${c}`);
          fs.mkdirSync(pc);
          folders.push(pc);
        }
      }
    }
    fs.mkdirSync(path.join(pa, 'empty'));
  }
  const pool = Buffer.alloc(16 << 10);
  for (let i = 0; i < pool.length; i++) pool[i] = Math.floor(rand() * 256);
  for (let i = 0; i < files; i++) {
    const r = rand();
    const size = r < 0.05 ? 0 : r < 0.8 ? Math.floor(rand() * 4096) : Math.floor(rand() * (16 << 10));
    const data = Buffer.from(pool.subarray(0, size));
    if (size >= 4) data.writeUInt32LE(i, 0);
    const f = path.join(folders[i % folders.length]!, `f${i}.${['dat', 'json', 'yml', 'mca'][i % 4]}`);
    fs.writeFileSync(f, data);
    if (i % 97 === 0) fs.chmodSync(f, 0o600);
    else if (i % 101 === 0) fs.chmodSync(f, 0o755);
  }
}

/** treeDigest (every path, mode and content) with every regular file's size besides: the tree as a restore must give it back. */
function digest(dir: string): string {
  const sizes = createHash('sha256');
  const walk = (d: string, rel: string) => {
    for (const n of fs.readdirSync(d).sort()) {
      const st = fs.lstatSync(path.join(d, n));
      sizes.update(`${rel}${n}\0${st.size}\0`);
      if (st.isDirectory()) walk(path.join(d, n), `${rel}${n}/`);
    }
  };
  walk(dir, '');
  return `${treeDigest(dir)}:${sizes.digest('hex')}`;
}

/** The Job program as the image runs it (`felis files ...`), timed as a process; its Result. */
function felis(world: string, env: NodeJS.ProcessEnv, args: string[]): { ms: number; result: Record<string, unknown> } {
  const full = { ...process.env, ...env };
  delete full.NODE_OPTIONS;
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [program, 'files', ...args, '--worlds-root', world], { encoding: 'utf8', env: full, maxBuffer: 64 << 20 });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`felis files ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  const last = r.stdout.trimEnd().split('\n').pop() ?? '';
  const result = JSON.parse(last.replace(/^FELIS-FILES-RESULT: /, '')) as Record<string, unknown>;
  if (result.code) throw new Error(`felis files ${args.join(' ')} refused: ${last}`);
  return { ms, result };
}

const sync = (p: string) => execFileSync('sync', ['-f', p]);

log('building dist/felis.mjs');
await buildJobProgram();
const base = fs.mkdtempSync(path.join(os.tmpdir(), 'felis-trash-bench-'));
const world = path.join(base, 'world');
fs.mkdirSync(world);
fs.mkdirSync(path.join(world, 'empty'));

const plain: number[] = [];
const trash: number[] = [];
const restore: number[] = [];
const start: number[] = [];
let seq = 0;

function plainRun(): number {
  const name = `tree-${seq++}`;
  buildTree(path.join(world, name), FILES);
  sync(world);
  const { ms } = felis(world, { FELIS_TRASH: 'off' }, ['--op', 'delete', '--path', name]);
  if (fs.existsSync(path.join(world, name))) throw new Error(`the plain delete left ${name} behind`);
  if (fs.existsSync(path.join(world, '.felis-edit-undo')) && fs.readdirSync(path.join(world, '.felis-edit-undo')).length !== 0)
    throw new Error('the plain delete (FELIS_TRASH=off) put something in the trash');
  sync(world);
  return ms;
}

function trashRun(): { del: number; restore: number } {
  const name = `tree-${seq++}`;
  const dir = path.join(world, name);
  buildTree(dir, FILES);
  const before = digest(dir);
  sync(world);
  const del = felis(world, { FELIS_TRASH: 'on', FELIS_ACTOR: 'bench' }, ['--op', 'delete', '--path', name]);
  const id = del.result.trash_id;
  if (typeof id !== 'string') throw new Error(`the trash delete gave no trash_id: ${JSON.stringify(del.result)}`);
  if (fs.existsSync(dir)) throw new Error(`the trash delete left ${name} behind`);
  sync(world);
  const res = felis(world, {}, ['--op', 'trash-restore', '--path', '.', '--trash-id', id]);
  const after = digest(dir);
  if (after !== before) throw new Error(`RESTORE IS NOT BYTE-IDENTICAL: ${name} before the delete ${before}, after the restore ${after}`);
  if (fs.existsSync(path.join(world, '.felis-edit-undo', id))) throw new Error(`the restore left record ${id} behind`);
  fs.rmSync(dir, { recursive: true, force: true });
  sync(world);
  return { del: del.ms, restore: res.ms };
}

function startRun(): number {
  return felis(world, {}, ['--op', 'list', '--path', 'empty']).ms;
}

try {
  // A warm-up of each (the page cache holds the program, the trash folder exists), not counted.
  startRun();
  plainRun();
  trashRun();
  for (let i = 0; i < RUNS; i++) {
    start.push(startRun());
    if (i % 2 === 0) {
      plain.push(plainRun());
      const t = trashRun();
      trash.push(t.del);
      restore.push(t.restore);
    } else {
      const t = trashRun();
      trash.push(t.del);
      restore.push(t.restore);
      plain.push(plainRun());
    }
    start.push(startRun());
    if (!asJson) process.stderr.write('.');
  }
  if (!asJson) process.stderr.write('\n');
} finally {
  fs.rmSync(base, { recursive: true, force: true });
}

const out = {
  trash_files: FILES,
  plain_delete_ms: r1(median(plain)),
  trash_delete_ms: r1(median(trash)),
  trash_delete_ratio: r2(median(trash) / median(plain)),
  trash_restore_ms: r1(median(restore)),
  job_start_ms: r1(median(start)),
  trash_restore_beyond_start_ms: r1(median(restore) - median(start)),
};
if (asJson) console.log(JSON.stringify(out));
else {
  const list = (xs: number[]) => xs.map((x) => Math.round(x)).join(', ');
  log(`undo trash (${FILES} files, median of ${RUNS}; the Job program as a process):`);
  log(`  delete, FELIS_TRASH=off: ${out.plain_delete_ms} ms  [${list(plain)}]`);
  log(`  delete, trash on:        ${out.trash_delete_ms} ms  [${list(trash)}]`);
  log(`  ratio trash/plain:       ${out.trash_delete_ratio} (target ≤ 1.2)`);
  log(`  trash-restore:           ${out.trash_restore_ms} ms  [${list(restore)}]`);
  log(`  Job start (list empty):  ${out.job_start_ms} ms  [${list(start)}]`);
  log(`  restore beyond start:    ${out.trash_restore_beyond_start_ms} ms (target ≤ 1000)`);
  log('  every restore byte-identical to the tree before its delete');
}
