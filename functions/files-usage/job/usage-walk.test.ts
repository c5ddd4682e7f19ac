import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { makeWorld, openFds, type World } from '../../../job/testing/world.ts';
import { WorldRoot } from '../../../job/volume/root.ts';
import type { Result } from '../../../lib/protocol/result.ts';
import type { UsageChild, UsageFigures } from '../op.ts';
import { USAGE_BUDGET_MS, type UsageOptions, usageWalk } from './usage-walk.ts';

const alloc = (p: string) => fs.lstatSync(p).blocks * 512;
const size = (p: string) => fs.lstatSync(p).size;

function write(w: World, rel: string, data: string | Buffer = 'x'): void {
  fs.mkdirSync(path.dirname(w.p(rel)), { recursive: true });
  fs.writeFileSync(w.p(rel), data);
}

/** Random bytes: blocks really allocated (no hole, nothing a file system could share). */
const bulk = (n: number) => randomBytes(n);

async function walk(w: World, p: string, o: Partial<UsageOptions> = {}): Promise<UsageFigures> {
  const root = WorldRoot.open(w.root);
  try {
    const r = await usageWalk(root, p, { depth: 1, top: 10, ...o });
    assert.ok(!('code' in r && (r as Result).code), JSON.stringify(r));
    return r as UsageFigures;
  } finally {
    root.close();
  }
}

async function refused(w: World, p: string): Promise<Result> {
  const root = WorldRoot.open(w.root);
  try {
    return (await usageWalk(root, p, { depth: 1, top: 10 })) as Result;
  } finally {
    root.close();
  }
}

/**
 * The oracle: every entry under `rel` (the folder included) by a plain lstat walk, each inode once,
 * less what `skip` names (the withheld file, working names: whole subtrees).
 */
function plainDu(w: World, rel: string, skip: (rel: string) => boolean = () => false) {
  const seen = new Set<number>();
  const t = { bytes: 0, apparent: 0, files: 0, dirs: -1 };
  const visit = (r: string) => {
    const st = fs.lstatSync(w.p(r));
    if (st.isDirectory()) t.dirs++;
    else t.files++;
    if (!seen.has(st.ino)) {
      seen.add(st.ino);
      t.bytes += st.blocks * 512;
      t.apparent += st.size;
    }
    if (st.isDirectory()) for (const n of fs.readdirSync(w.p(r))) if (!skip(path.join(r, n))) visit(path.join(r, n));
  };
  visit(rel);
  return t;
}

const names = (cs: UsageChild[]) => cs.map((c) => c.name);

test('totals as a plain lstat walk counts them; children by bytes (then name), nested to depth', async () => {
  const w = makeWorld();
  write(w, 'world/region/r.0.0.mca', bulk(200_000));
  write(w, 'world/region/r.0.1.mca', bulk(90_000));
  write(w, 'world/level.dat', bulk(5000));
  write(w, 'world/data/raids.dat', bulk(30_000));
  write(w, 'plugins/a.jar', bulk(120_000));
  write(w, 'plugins/b/config.yml', 'b: 1\n');
  write(w, 'logs/latest.log', bulk(120_000));
  write(w, 'empty.txt', '');
  fs.mkdirSync(w.p('void'));
  const secret = (r: string) => r === 'config/paper-global.yml';
  const want = plainDu(w, '.', secret);

  const r = await walk(w, '', { depth: 3 });
  assert.equal(r.path, '');
  assert.equal(r.bytes, want.bytes);
  assert.equal(r.apparent_bytes, want.apparent - 0, 'the withheld file aside, every st_size');
  assert.equal(r.files, want.files + 1, 'the withheld file is a file, of 0 bytes');
  assert.equal(r.dirs, want.dirs);
  assert.equal(r.truncated, false);
  assert.equal(r.trash_bytes, 0);

  // Direct entries, largest first; equal sizes by name.
  const sizes = r.children.map((c) => c.bytes);
  assert.deepEqual(
    sizes,
    [...sizes].sort((a, b) => b - a),
  );
  for (let i = 1; i < r.children.length; i++) {
    const [a, b] = [r.children[i - 1], r.children[i]];
    if (a.bytes === b.bytes) assert.ok(a.name < b.name, `${a.name} before ${b.name}`);
  }
  assert.deepEqual(new Set(names(r.children)), new Set(['world', 'plugins', 'logs', 'config', 'server.properties', 'empty.txt', 'void']));
  assert.equal(r.children[0].name, 'world');
  const world = r.children.find((c) => c.name === 'world')!;
  const wantWorld = plainDu(w, 'world');
  assert.deepEqual({ ...world, children: undefined }, { name: 'world', bytes: wantWorld.bytes, apparent_bytes: wantWorld.apparent, files: 4, is_dir: true, children: undefined });
  // Depth 3: world → region → its files; a file has no children, a folder at the last level neither.
  const region = world.children!.find((c) => c.name === 'region')!;
  assert.equal(world.children![0].name, 'region');
  assert.deepEqual(names(region.children!), ['r.0.0.mca', 'r.0.1.mca']);
  assert.deepEqual(region.children![0], { name: 'r.0.0.mca', bytes: alloc(w.p('world/region/r.0.0.mca')), apparent_bytes: 200_000, files: 1, is_dir: false });
  const plugins = r.children.find((c) => c.name === 'plugins')!;
  assert.equal(plugins.children!.find((c) => c.name === 'b')!.children!.length, 1);
  assert.equal(plugins.children!.find((c) => c.name === 'b')!.children![0].children, undefined);
  assert.deepEqual(
    r.children.find((c) => c.name === 'void'),
    { name: 'void', bytes: alloc(w.p('void')), apparent_bytes: size(w.p('void')), files: 0, is_dir: true, children: [] },
  );

  // Depth 1: no nesting at all.
  const flat = await walk(w, '', { depth: 1 });
  assert.ok(flat.children.every((c) => c.children === undefined));
  assert.deepEqual(names(flat.children), names(r.children));
  assert.equal(flat.bytes, r.bytes);

  // Below a sub-path: its figures, the children its own.
  const sub = await walk(w, 'world/', { depth: 2 });
  assert.equal(sub.path, 'world');
  assert.equal(sub.bytes, wantWorld.bytes);
  assert.deepEqual(names(sub.children), ['region', 'data', 'level.dat']);
});

test('a file with two names counts once, in the figures and among the largest', async () => {
  const w = makeWorld();
  write(w, 'a/big.bin', bulk(300_000));
  fs.mkdirSync(w.p('b'));
  fs.linkSync(w.p('a/big.bin'), w.p('b/same.bin'));
  fs.linkSync(w.p('a/big.bin'), w.p('a/again.bin'));
  const r = await walk(w, '', { top: 5 });
  const big = alloc(w.p('a/big.bin'));
  const withTwice = plainDu(w, '.', (p) => p === 'config/paper-global.yml');
  assert.equal(r.bytes, withTwice.bytes, 'the oracle counts an inode once too');
  const a = r.children.find((c) => c.name === 'a')!.bytes;
  const b = r.children.find((c) => c.name === 'b')!.bytes;
  // Whichever name the walk meets first holds the bytes; the folders' own blocks aside, once in all.
  assert.equal(a + b - alloc(w.p('a')) - alloc(w.p('b')), big);
  assert.equal(r.files, 3 + 3, 'every name is a file: three names here, three in the world');
  assert.equal(r.largest.filter((l) => l.bytes === big).length, 1);
  assert.equal(r.largest.filter((l) => /big|same|again/.test(l.path)).length, 1, 'the other names are not files of 0 bytes');
  assert.equal(r.largest[0].bytes, big);
  assert.equal(r.largest[0].apparent_bytes, 300_000);
});

test('a link counts its own size and is never entered, whether it points out of the world or in', async () => {
  const w = makeWorld();
  fs.writeFileSync(`${w.outside}/huge.bin`, bulk(500_000));
  write(w, 'real/big.bin', bulk(200_000));
  fs.mkdirSync(w.p('links'));
  fs.symlinkSync(`${w.outside}/huge.bin`, w.p('links/out-file'));
  fs.symlinkSync(w.outside, w.p('links/out-dir'));
  fs.symlinkSync('../real/big.bin', w.p('links/in-file'));
  fs.symlinkSync('../real', w.p('links/in-dir'));
  const r = await walk(w, 'links', { depth: 2, top: 10 });
  const linkBytes = ['out-file', 'out-dir', 'in-file', 'in-dir'].reduce((s, n) => s + alloc(w.p(`links/${n}`)), 0);
  const linkSizes = ['out-file', 'out-dir', 'in-file', 'in-dir'].reduce((s, n) => s + size(w.p(`links/${n}`)), 0);
  assert.equal(r.bytes, alloc(w.p('links')) + linkBytes);
  assert.equal(r.apparent_bytes, size(w.p('links')) + linkSizes);
  assert.equal(r.files, 4);
  assert.equal(r.dirs, 0, 'a link to a folder is not a folder');
  assert.ok(r.children.every((c) => !c.is_dir && c.files === 1 && c.children === undefined));
  assert.deepEqual(r.largest, [], 'links are not files to list');
  // The folder holding the links, from the root: the real file counts once, under real/.
  const all = await walk(w, '', { top: 1 });
  assert.equal(all.largest[0].path, 'real/big.bin');
  assert.ok(all.bytes < alloc(`${w.outside}/huge.bin`) + alloc(w.p('real/big.bin')));
});

test('the withheld file, a second name of it and a copy of its content count as files of 0 bytes', async () => {
  const w = makeWorld();
  const secret = bulk(100_000);
  fs.writeFileSync(w.p('config/paper-global.yml'), secret);
  fs.mkdirSync(w.p('backup'));
  fs.linkSync(w.p('config/paper-global.yml'), w.p('backup/pg-link.yml'));
  fs.writeFileSync(w.p('backup/pg-copy.yml'), secret);
  write(w, 'backup/other.bin', bulk(1000));
  const r = await walk(w, '', { depth: 2, top: 100 });
  const hidden = new Set(['config/paper-global.yml', 'backup/pg-link.yml', 'backup/pg-copy.yml']);
  const want = plainDu(w, '.', (p) => hidden.has(p));
  assert.equal(r.bytes, want.bytes);
  assert.equal(r.apparent_bytes, want.apparent);
  assert.equal(r.files, want.files + 3);
  const backup = r.children.find((c) => c.name === 'backup')!;
  assert.equal(backup.bytes, alloc(w.p('backup')) + alloc(w.p('backup/other.bin')));
  assert.deepEqual(
    backup.children!.filter((c) => c.name.startsWith('pg-')).map((c) => [c.name, c.bytes, c.apparent_bytes]),
    [
      ['pg-copy.yml', 0, 0],
      ['pg-link.yml', 0, 0],
    ],
  );
  const config = r.children.find((c) => c.name === 'config')!;
  assert.deepEqual(
    config.children!.find((c) => c.name === 'paper-global.yml'),
    { name: 'paper-global.yml', bytes: 0, apparent_bytes: 0, files: 1, is_dir: false },
  );
  assert.ok(r.largest.every((l) => !hidden.has(l.path) || (l.bytes === 0 && l.apparent_bytes === 0)));
  // Asked of itself: a file of 0 bytes.
  const alone = await walk(w, 'config/paper-global.yml');
  assert.deepEqual([alone.bytes, alone.apparent_bytes, alone.files], [0, 0, 1]);
});

test("the trash and the ops' working names count in trash_bytes only, never named; a user's look-alike is the world's", async () => {
  const w = makeWorld();
  const before = await walk(w, '', { depth: 3 });
  write(w, '.felis-edit-undo/1765000000000-0123456789ab/0/big.bin', bulk(150_000));
  write(w, '.felis-edit-withheld/ledger', '[]');
  write(w, 'world/.felis-edit-0123456789ab', bulk(40_000));
  write(w, '.felis-unzip-0123456789ab/x/y.bin', bulk(20_000));
  write(w, '.felis-trash-abcdefabcdef/old.bin', bulk(10_000));
  write(w, 'world/.felis-edit-notes.txt', bulk(3000));
  const trash = ['.felis-edit-undo', '.felis-edit-withheld', 'world/.felis-edit-0123456789ab', '.felis-unzip-0123456789ab', '.felis-trash-abcdefabcdef'];
  const want = trash.reduce((s, t) => s + plainDu(w, t).bytes, 0);
  const r = await walk(w, '', { depth: 3, top: 100 });
  assert.equal(r.trash_bytes, want);
  const world = plainDu(w, '.', (p) => trash.includes(p) || p === 'config/paper-global.yml');
  assert.equal(r.bytes, world.bytes);
  assert.equal(r.apparent_bytes, world.apparent);
  assert.equal(r.files, before.files + 1);
  assert.equal(r.dirs, before.dirs + 1);
  const text = JSON.stringify({ ...r, trash_bytes: 0 });
  for (const n of ['felis-edit-undo', 'felis-edit-withheld', '0123456789ab', 'abcdefabcdef', 'big.bin', 'ledger']) assert.ok(!text.includes(n), `${n} is named`);
  assert.ok(text.includes('.felis-edit-notes.txt'));
  // Below a folder: only what is there.
  assert.equal((await walk(w, 'world')).trash_bytes, alloc(w.p('world/.felis-edit-0123456789ab')));
  // Nothing addresses one.
  assert.equal((await refused(w, '.felis-edit-undo')).code, 'not_found');
  assert.equal((await refused(w, '.felis-unzip-0123456789ab/x')).code, 'not_found');
});

test('a file both in the trash and in the world counts in the world, whichever the walk meets first', async () => {
  const w = makeWorld();
  write(w, 'a/kept.bin', bulk(80_000));
  write(w, 'z/kept.bin', bulk(70_000));
  fs.mkdirSync(w.p('.felis-edit-undo/1765000000000-0123456789ab/0'), { recursive: true });
  fs.linkSync(w.p('a/kept.bin'), w.p('.felis-edit-undo/1765000000000-0123456789ab/0/kept.bin'));
  fs.linkSync(w.p('z/kept.bin'), w.p('.felis-edit-undo/1765000000000-0123456789ab/0/zkept.bin'));
  const r = await walk(w, '');
  const trashFolders = plainDu(w, '.felis-edit-undo').bytes - alloc(w.p('a/kept.bin')) - alloc(w.p('z/kept.bin'));
  assert.equal(r.trash_bytes, trashFolders);
  assert.equal(r.children.find((c) => c.name === 'a')!.bytes, alloc(w.p('a')) + alloc(w.p('a/kept.bin')));
  assert.equal(r.children.find((c) => c.name === 'z')!.bytes, alloc(w.p('z')) + alloc(w.p('z/kept.bin')));
});

test('largest: the top files by bytes, paths from the root, at most `top`', async () => {
  const w = makeWorld();
  const sizes = [5000, 90_000, 12_000, 250_000, 40_000, 130_000, 70_000];
  for (const [i, n] of sizes.entries()) write(w, `d${i % 3}/sub/f${i}.bin`, bulk(n));
  const r = await walk(w, 'd1', { top: 100 });
  assert.deepEqual(
    r.largest.map((l) => l.path),
    ['d1/sub/f1.bin', 'd1/sub/f4.bin'],
  );
  const three = await walk(w, '', { top: 3 });
  assert.deepEqual(
    three.largest.map((l) => [l.path, l.apparent_bytes]),
    [
      ['d0/sub/f3.bin', 250_000],
      ['d2/sub/f5.bin', 130_000],
      ['d1/sub/f1.bin', 90_000],
    ],
  );
  assert.deepEqual(
    three.largest.map((l) => l.bytes),
    ['d0/sub/f3.bin', 'd2/sub/f5.bin', 'd1/sub/f1.bin'].map((p) => alloc(w.p(p))),
  );
});

test('the time budget: past it the walk answers what it walked, truncated (an injected clock)', async () => {
  const w = makeWorld();
  for (let d = 0; d < 4; d++) for (let i = 0; i < 300; i++) write(w, `f${d}/${i}.dat`, 'abc');
  let t = 0;
  // Each look at the clock is a second later: the budget of 2.5 s lasts a few looks (one per 256 entries).
  const r = await walk(w, '', { depth: 2, budgetMs: 2500, now: () => (t += 1000) - 1000 });
  assert.equal(r.truncated, true);
  assert.ok(r.files > 0 && r.files < 1200, String(r.files));
  // What it answers holds together: the children it had begun are in, with what it had seen of them.
  const sum = r.children.reduce((s, c) => s + c.files, 0);
  assert.equal(sum, r.files);
  const all = await walk(w, '', { depth: 2, now: () => 0 });
  assert.equal(all.truncated, false);
  assert.equal(all.files, 1200 + 3);
  assert.ok(r.bytes < all.bytes);
  assert.equal(USAGE_BUDGET_MS, 20_000);
});

test("a long walk lets the event loop turn (a browse Pod's other requests do not wait for it)", async () => {
  const w = makeWorld();
  for (let i = 0; i < 1000; i++) write(w, `big/${i}.dat`);
  let turned = false;
  let ranMeanwhile = false;
  setImmediate(() => (turned = true));
  let t = 0;
  // Each look at the clock is 25 ms later: past the 20 ms between turns, never past the budget.
  const r = await walk(w, 'big', { budgetMs: 1e9, now: () => ((ranMeanwhile ||= turned), (t += 25)) });
  assert.equal(r.files, 1000);
  assert.ok(ranMeanwhile, 'something else ran while the walk was under way');
});

test('a path that is a file answers it alone; a link inside to a file is followed as a folder would be', async () => {
  const w = makeWorld();
  write(w, 'world/level.dat', bulk(9000));
  fs.symlinkSync('world/level.dat', w.p('level-link'));
  const r = await walk(w, 'world/./level.dat', { top: 5 });
  const b = alloc(w.p('world/level.dat'));
  assert.deepEqual(r, {
    path: 'world/level.dat',
    bytes: b,
    apparent_bytes: 9000,
    files: 1,
    dirs: 0,
    children: [],
    largest: [{ path: 'world/level.dat', bytes: b, apparent_bytes: 9000 }],
    trash_bytes: 0,
    truncated: false,
  });
  assert.equal((await walk(w, 'level-link')).bytes, b);
});

test('refusals as the other ops answer them: not_found, a link out of the world, a file on the way; no fd left open', async () => {
  const w = makeWorld();
  write(w, 'real/x.bin', bulk(1000));
  fs.symlinkSync(w.outside, w.p('out-link'));
  fs.symlinkSync('real', w.p('in-link'));
  const fds = openFds();
  assert.equal((await refused(w, 'nope')).code, 'not_found');
  assert.equal((await refused(w, 'real/nope')).code, 'not_found');
  assert.equal((await refused(w, 'out-link')).code, 'bad_path');
  assert.equal((await refused(w, 'out-link/secret.txt')).code, 'bad_path');
  assert.equal((await refused(w, 'real/x.bin/y')).code, 'bad_path');
  assert.equal((await refused(w, '../outside')).code, 'bad_path');
  // A link inside the world may be on the way, as a listing's path may: the figures are the folder's.
  const via = await walk(w, 'in-link', { top: 1 });
  assert.equal(via.bytes, plainDu(w, 'real').bytes);
  assert.equal(via.largest[0].path, 'in-link/x.bin');
  for (let i = 0; i < 3; i++) write(w, `a${i}/b/c/x.txt`);
  await walk(w, '', { depth: 3 });
  let t = 0;
  await walk(w, '', { depth: 3, budgetMs: 0, now: () => (t += 1) });
  assert.equal(openFds(), fds);
});

test('names that are not UTF-8: stat-ed by their bytes, shown as a listing decodes them', async () => {
  const w = makeWorld();
  fs.mkdirSync(w.p('raw'));
  const at = (...parts: Buffer[]) => Buffer.concat([Buffer.from(`${w.p('raw')}/`), ...parts]);
  fs.writeFileSync(at(Buffer.from([0x66, 0xff])), bulk(20_000));
  fs.mkdirSync(at(Buffer.from([0x64, 0xfe])));
  fs.writeFileSync(at(Buffer.from([0x64, 0xfe]), Buffer.from('/é.bin')), bulk(50_000));
  const r = await walk(w, 'raw', { depth: 2, top: 2 });
  assert.deepEqual(names(r.children), ['d\uFFFD', 'f\uFFFD']);
  assert.deepEqual(names(r.children[0].children!), ['é.bin']);
  assert.deepEqual(
    r.largest.map((l) => [l.path, l.apparent_bytes]),
    [
      ['raw/d\uFFFD/é.bin', 50_000],
      ['raw/f\uFFFD', 20_000],
    ],
  );
});

test('a folder that cannot be read counts by its own entry, the rest still walked', { skip: process.getuid?.() === 0 ? 'root reads everything' : false }, async () => {
  const w = makeWorld();
  write(w, 'locked/big.bin', bulk(50_000));
  write(w, 'open/x.bin', bulk(1000));
  fs.chmodSync(w.p('locked'), 0o000);
  try {
    const r = await walk(w, '');
    assert.deepEqual(
      r.children.find((c) => c.name === 'locked'),
      { name: 'locked', bytes: alloc(w.p('locked')), apparent_bytes: size(w.p('locked')), files: 0, is_dir: true },
    );
    assert.ok(r.children.some((c) => c.name === 'open' && c.files === 1));
  } finally {
    fs.chmodSync(w.p('locked'), 0o755);
  }
});

test("a folder's children are its largest 100 (10 of a sub-folder's), the figures still count them all", async () => {
  const w = makeWorld();
  for (let i = 0; i < 120; i++) write(w, `many/f${String(i).padStart(3, '0')}.bin`, bulk(4096 * (i + 1)));
  const r = await walk(w, 'many');
  assert.equal(r.files, 120);
  assert.equal(r.bytes, plainDu(w, 'many').bytes);
  assert.equal(r.children.length, 100);
  assert.deepEqual(
    r.children.slice(0, 2).map((c) => c.name),
    ['f119.bin', 'f118.bin'],
  );
  assert.equal(r.children[99].name, 'f020.bin');
  const nested = await walk(w, '', { depth: 2 });
  const many = nested.children.find((c) => c.name === 'many')!;
  assert.equal(many.files, 120);
  assert.deepEqual(
    many.children!.map((c) => c.name),
    Array.from({ length: 10 }, (_, i) => `f${119 - i}.bin`),
  );
});

test('a folder deeper than 512 below the path counts by its own entry only, and the answer says it is truncated', async () => {
  const w = makeWorld();
  const chain = Array.from({ length: 520 }, () => 'd').join('/');
  write(w, `deep/${chain}/bottom.bin`, bulk(10_000));
  write(w, `deep/${Array.from({ length: 500 }, () => 'd').join('/')}/mid.bin`, bulk(10_000));
  const r = await walk(w, 'deep', { top: 5 });
  assert.equal(r.truncated, true);
  assert.equal(r.dirs, 513, 'the 513th counts by its own entry; what is below it is not seen');
  assert.deepEqual(
    r.largest.map((l) => l.path.split('/').pop()),
    ['mid.bin'],
  );
  const inner = await walk(w, `deep/${Array.from({ length: 100 }, () => 'd').join('/')}`, { top: 5 });
  assert.equal(inner.truncated, false);
  assert.equal(inner.files, 2);
});

test('a folder swapped for a link out of the world mid-walk: the walk goes on in the folder it opened, never outside; the working folder is back before each turn and at the end', async () => {
  const w = makeWorld();
  for (let i = 0; i < 700; i++) write(w, `x/f${i}.dat`, 'abc');
  write(w, 'x/sub/inner.dat', 'abcd');
  // Outside: the same names, much bigger, and a folder by the name of the sub-folder.
  for (let i = 0; i < 700; i++) fs.writeFileSync(path.join(w.outside, `f${i}.dat`), bulk(4096));
  fs.mkdirSync(path.join(w.outside, 'sub'));
  fs.writeFileSync(path.join(w.outside, 'sub', 'inner.dat'), bulk(1 << 20));
  const expected = plainDu(w, 'x');
  const home = process.cwd();
  const cwds: string[] = [];
  let looks = 0;
  const r = await walk(w, 'x', {
    budgetMs: 1e9,
    now: () => {
      cwds.push(process.cwd());
      // The second look is 256 entries in: x goes away and a link out takes its name.
      if (++looks === 2) {
        fs.renameSync(w.p('x'), w.p('x-moved'));
        fs.symlinkSync(w.outside, w.p('x'));
      }
      return 0;
    },
  });
  assert.ok(looks >= 3, String(looks));
  assert.deepEqual([r.files, r.bytes, r.apparent_bytes, r.dirs], [expected.files, expected.bytes, expected.apparent, expected.dirs]);
  assert.ok(!r.largest.some((l) => l.apparent_bytes >= 4096), JSON.stringify(r.largest));
  assert.ok(
    cwds.every((c) => c === home),
    `the working folder at each look: ${[...new Set(cwds)].join(', ')}`,
  );
  assert.equal(process.cwd(), home);
});

test('a folder too big to read whole is streamed, with the same figures; so is one past what the folders held whole may take', async () => {
  const w = makeWorld();
  // Long names: the folder's size passes 64 KiB on any common filesystem.
  const long = 'n'.repeat(100);
  for (let i = 0; i < 1500; i++) write(w, `big/${long}${i}`, 'ab');
  for (let d = 0; d < 5; d++) for (let i = 0; i < 20; i++) write(w, `small/${'d'.repeat(d + 1)}/${i}.dat`, 'abc');
  assert.ok(fs.statSync(w.p('big')).size > 64 << 10 || fs.readdirSync(w.p('big')).length === 1500);
  const r = await walk(w, '', { depth: 2 });
  const expected = plainDu(w, '', (rel) => rel === 'config/paper-global.yml');
  assert.deepEqual([r.files, r.dirs], [expected.files + 1, expected.dirs]);
  const big = r.children.find((c) => c.name === 'big')!;
  assert.equal(big.files, 1500);
  assert.equal(big.apparent_bytes, size(w.p('big')) + 1500 * 2);
  assert.equal(big.bytes, alloc(w.p('big')) + 1500 * alloc(w.p(`big/${long}0`)));
});
