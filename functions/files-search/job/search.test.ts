import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { makeWorld, openFds, type World } from '../../../job/testing/world.ts';
import { WorldRoot } from '../../../job/volume/root.ts';
import { SEARCH_BUDGET_MS, SEARCH_DEFAULT_LIMIT } from '../../../lib/protocol/limits.ts';
import { formatResultLine } from '../../../lib/protocol/result.ts';
import { parseResultPayload } from '../../../lib/protocol/result-parse.ts';
import { searchTree } from './search.ts';

const paths = (r: { matches?: { path: string }[] }) => (r.matches ?? []).map((m) => m.path);

function write(w: World, rel: string, text = 'x'): void {
  fs.mkdirSync(w.p(rel.split('/').slice(0, -1).join('/')), { recursive: true });
  fs.writeFileSync(w.p(rel), text);
}

test('a name anywhere below the path, at any depth, with its path from the root; case-insensitive', async () => {
  const w = makeWorld();
  write(w, 'world/level.dat', 'LEVEL');
  write(w, 'world/level.dat_old');
  write(w, 'world_nether/DIM-1/LEVEL.dat');
  write(w, 'a/b/c/d/e/f/g/h/deep-level.txt');
  write(w, 'world/region/r.0.0.mca');
  const r = await w.run({ op: 'search', path: '', q: 'level' } as never);
  assert.equal(r.code, undefined, r.error);
  assert.deepEqual(paths(r), ['a/b/c/d/e/f/g/h/deep-level.txt', 'world/level.dat', 'world/level.dat_old', 'world_nether/DIM-1/LEVEL.dat']);
  const lvl = r.matches!.find((m) => m.path === 'world/level.dat')!;
  assert.equal(lvl.name, 'level.dat');
  assert.equal(lvl.size, 5);
  assert.equal(lvl.is_dir, false);
  assert.match(lvl.mod_time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
  assert.equal(r.truncated, false);
  // Every entry below the root was looked at: the world's own files plus these (folders included).
  assert.ok(r.scanned! >= 20, String(r.scanned));
  // Below a sub-path: only what is under it, paths still from the root; folders match too.
  const sub = await w.run({ op: 'search', path: 'world/', q: 'REG' } as never);
  assert.deepEqual(sub.matches, [{ path: 'world/region', name: 'region', size: sub.matches![0].size, is_dir: true, mod_time: sub.matches![0].mod_time }]);
});

test('the answer survives the result line: fields in order, decoded as sent', async () => {
  const w = makeWorld();
  write(w, 'world/level.dat', 'LEVEL');
  const r = await w.run({ op: 'search', path: 'world', q: 'level' } as never);
  const line = formatResultLine(r);
  assert.match(line, /"matches":\[\{"path":"world\/level.dat","name":"level.dat","size":5,"is_dir":false,"mod_time":"[^"]+"\}\],"scanned":1\}/);
  assert.deepEqual(parseResultPayload(line.slice(line.indexOf('{')).trimEnd()), { matches: r.matches, scanned: 1 });
});

test('results are in byte order of the whole path: a folder\'s contents sort as "name/", after "name-x" and "name.txt"', async () => {
  const w = makeWorld();
  for (const rel of ['d/x.log', 'd-x.log', 'd.log', 'd/a/z.log', 'D.log', 'é.log', 'e.log', 'd0.log', 'd/.log']) write(w, rel);
  const r = await w.run({ op: 'search', path: '', q: '.log' } as never);
  const got = paths(r);
  const expected = [...got].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  assert.deepEqual(got, expected);
  assert.deepEqual(got, ['D.log', 'd-x.log', 'd.log', 'd/.log', 'd/a/z.log', 'd/x.log', 'd0.log', 'e.log', 'é.log']);
});

test('a glob matches whole names: *.yml finds every .yml and nothing else', async () => {
  const w = makeWorld();
  write(w, 'plugins/Essentials/config.yml');
  write(w, 'plugins/Essentials/config.yml.bak');
  write(w, 'bukkit.YML');
  const r = await w.run({ op: 'search', path: '', q: '*.yml' } as never);
  assert.deepEqual(paths(r), ['bukkit.YML', 'config/paper-global.yml', 'config/paper.yml', 'plugins/Essentials/config.yml']);
  assert.deepEqual(paths(await w.run({ op: 'search', path: '', q: 'paper?yml' } as never)), ['config/paper.yml']);
});

test('at most limit matches; truncated only when there is one more (or the budget ran out)', async () => {
  const w = makeWorld();
  for (let i = 0; i < 12; i++) write(w, `logs/${String(i).padStart(2, '0')}.log`);
  const five = await w.run({ op: 'search', path: 'logs', q: '.log', limit: 5 } as never);
  assert.deepEqual(paths(five), ['logs/00.log', 'logs/01.log', 'logs/02.log', 'logs/03.log', 'logs/04.log']);
  assert.equal(five.truncated, true);
  assert.equal(five.scanned, 12, 'a folder is read whole (its names judged as they are read)');
  const exact = await w.run({ op: 'search', path: 'logs', q: '.log', limit: 12 } as never);
  assert.equal(exact.matches!.length, 12);
  assert.equal(exact.truncated, false);
  // No limit (or a nonsense one) is the default; more than the most is the most.
  const root = WorldRoot.open(w.root);
  try {
    for (let i = 0; i < SEARCH_DEFAULT_LIMIT + 5; i++) fs.writeFileSync(w.p(`logs/m${i}.log`), '');
    assert.equal((await searchTree(root, 'logs', { q: '.log' })).matches!.length, SEARCH_DEFAULT_LIMIT);
    assert.equal((await searchTree(root, 'logs', { q: '.log', limit: 0 })).matches!.length, SEARCH_DEFAULT_LIMIT);
    assert.equal((await searchTree(root, 'logs', { q: '.log', limit: 5000 })).matches!.length, SEARCH_DEFAULT_LIMIT + 5 + 12);
  } finally {
    root.close();
  }
});

test('the time budget: past it the search answers what it has, truncated (an injected clock)', async () => {
  const w = makeWorld();
  for (let d = 0; d < 4; d++) for (let i = 0; i < 300; i++) write(w, `f${d}/${i}.dat`);
  const root = WorldRoot.open(w.root);
  try {
    let t = 0;
    // Each look at the clock is a second later: the budget of 3.5 s lasts a few looks.
    const r = await searchTree(root, '', { q: '.dat', limit: 1000, budgetMs: 3500, now: () => (t += 1000) - 1000 });
    assert.equal(r.truncated, true);
    assert.ok(r.matches!.length > 0 && r.matches!.length < 1000, String(r.matches!.length));
    assert.ok(r.scanned! < 1200);
    const sorted = [...paths(r)].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    assert.deepEqual(paths(r), sorted, 'what it found is still in order: a prefix of the whole answer');
    // A clock that stands still: the same search finds all 1200 and is not truncated.
    const all = await searchTree(root, '', { q: '.dat', limit: 1000, now: () => 0 });
    assert.equal(all.truncated, true, '1200 > 1000');
    assert.deepEqual(paths(all).slice(0, r.matches!.length), paths(r));
    assert.equal(SEARCH_BUDGET_MS, 5000);
    // One big folder, no sub-folders: the clock is looked at every so many entries too, and what was
    // read of a folder the budget ran out in is not answered (it could not be put in order).
    for (let i = 0; i < 1000; i++) write(w, `big/${i}.dat`);
    t = 0;
    const flat = await searchTree(root, 'big', { q: '.dat', limit: 1000, budgetMs: 1500, now: () => (t += 1000) - 1000 });
    assert.equal(flat.truncated, true);
    assert.equal(flat.scanned, 512, 'the second look is past the budget');
    assert.deepEqual(flat.matches, []);
  } finally {
    root.close();
  }
});

test('a link is a match by its own name but never descended, inside the world or out of it', async () => {
  const w = makeWorld();
  fs.writeFileSync(`${w.outside}/level.dat`, 'outside');
  fs.symlinkSync(w.outside, w.p('out-link'));
  write(w, 'real/level.dat');
  fs.symlinkSync('real', w.p('in-link'));
  fs.symlinkSync('real/level.dat', w.p('level-link'));
  const r = await w.run({ op: 'search', path: '', q: 'level' } as never);
  assert.deepEqual(paths(r), ['level-link', 'real/level.dat']);
  const links = await w.run({ op: 'search', path: '', q: '*link' } as never);
  assert.deepEqual(paths(links), ['in-link', 'level-link', 'out-link']);
  assert.ok(
    links.matches!.every((m) => m.is_dir === false),
    'a link is not a folder',
  );
  // The search path itself may go through a link inside (as a listing's does); never out.
  assert.deepEqual(paths(await w.run({ op: 'search', path: 'in-link', q: 'level' } as never)), ['in-link/level.dat']);
  assert.equal((await w.run({ op: 'search', path: 'out-link', q: 'level' } as never)).code, 'bad_path');
});

test("the ops' working files and folders are never shown nor entered", async () => {
  const w = makeWorld();
  write(w, 'world/.felis-edit-0123456789ab', 'temp');
  write(w, '.felis-unzip-0123456789ab/level.dat');
  write(w, '.felis-edit-withheld/ledger');
  write(w, '.felis-edit-abcdefabcdef/level.dat');
  write(w, 'world/level.dat');
  write(w, 'world/.felis-edit-notes.txt', 'a user file');
  const r = await w.run({ op: 'search', path: '', q: 'felis' } as never);
  assert.deepEqual(paths(r), ['world/.felis-edit-notes.txt']);
  assert.deepEqual(paths(await w.run({ op: 'search', path: '', q: 'level' } as never)), ['world/level.dat']);
  assert.deepEqual(paths(await w.run({ op: 'search', path: '', q: 'ledger' } as never)), []);
  assert.equal((await w.run({ op: 'search', path: '.felis-unzip-0123456789ab', q: 'level' } as never)).code, 'not_found');
});

test('the withheld file, and a hard link to it, are found as a listing shows them: size 0', async () => {
  const w = makeWorld();
  fs.mkdirSync(w.p('backup'));
  fs.linkSync(w.p('config/paper-global.yml'), w.p('backup/pg.yml'));
  const r = await w.run({ op: 'search', path: '', q: '*.yml' } as never);
  const bySize = Object.fromEntries(r.matches!.map((m) => [m.path, m.size]));
  assert.deepEqual(bySize, { 'backup/pg.yml': 0, 'config/paper-global.yml': 0, 'config/paper.yml': 'paper: true\n'.length });
});

test('a short query is refused; a missing path is not_found; a file is not a folder; no fd is left open', async () => {
  const w = makeWorld();
  const before = openFds();
  assert.equal((await w.run({ op: 'search', path: '', q: 'a' } as never)).code, 'bad_path');
  assert.equal((await w.run({ op: 'search', path: '', q: '' } as never)).code, 'bad_path');
  assert.equal((await w.run({ op: 'search', path: 'nope', q: 'level' } as never)).code, 'not_found');
  assert.equal((await w.run({ op: 'search', path: 'server.properties', q: 'level' } as never)).code, 'bad_path');
  for (let i = 0; i < 3; i++) write(w, `a${i}/b/c/x.txt`);
  await w.run({ op: 'search', path: '', q: 'x.txt', limit: 1 } as never);
  await w.run({ op: 'search', path: '', q: 'x.txt' } as never);
  assert.equal(openFds(), before);
});

test('a folder that cannot be read is left out, the rest still searched', { skip: process.getuid?.() === 0 ? 'root reads everything' : false }, async () => {
  const w = makeWorld();
  write(w, 'locked/level.dat');
  write(w, 'open/level.dat');
  fs.chmodSync(w.p('locked'), 0o000);
  try {
    const r = await w.run({ op: 'search', path: '', q: 'level' } as never);
    assert.deepEqual(paths(r), ['open/level.dat']);
  } finally {
    fs.chmodSync(w.p('locked'), 0o755);
  }
});

test('names that are not UTF-8: sorted by their bytes, shown as a listing decodes them, folders among them entered', async () => {
  const w = makeWorld();
  fs.mkdirSync(w.p('raw'));
  const at = (...parts: Buffer[]) => Buffer.concat([Buffer.from(`${w.p('raw')}/`), ...parts]);
  fs.writeFileSync(at(Buffer.from([0x66, 0xff]), Buffer.from('.log')), '');
  fs.writeFileSync(at(Buffer.from('z.log')), '');
  fs.writeFileSync(at(Buffer.from('é.log')), 'é');
  fs.mkdirSync(at(Buffer.from([0x64, 0xfe])));
  fs.writeFileSync(at(Buffer.from([0x64, 0xfe]), Buffer.from('/x.log')), 'xx');
  const r = await w.run({ op: 'search', path: 'raw', q: '.log' } as never);
  assert.deepEqual(paths(r), ['raw/d\uFFFD/x.log', 'raw/f\uFFFD.log', 'raw/z.log', 'raw/é.log']);
  assert.deepEqual(
    r.matches!.map((m) => m.size),
    [2, 0, 0, 2],
    "each stat'ed by its own bytes",
  );
  assert.deepEqual(paths(await w.run({ op: 'search', path: 'raw', q: 'É.L' } as never)), ['raw/é.log']);
});

test("a long walk lets the event loop turn (a browse Pod's other requests do not wait for it)", async () => {
  const w = makeWorld();
  for (let i = 0; i < 1000; i++) write(w, `big/${i}.dat`);
  const root = WorldRoot.open(w.root);
  try {
    let ranMeanwhile = false;
    let turned = false;
    setImmediate(() => (turned = true));
    let t = 0;
    // Each look at the clock is 25 ms later: past the 20 ms between turns, never past the budget.
    const r = await searchTree(root, 'big', { q: '.dat', limit: 1000, budgetMs: 1e9, now: () => ((ranMeanwhile ||= turned), (t += 25)) });
    assert.equal(r.matches!.length, 1000);
    assert.ok(ranMeanwhile, 'something else ran while the walk was under way');
  } finally {
    root.close();
  }
});

test('against a plain walk of a random tree: for every limit, the first matches of the whole answer in byte order', async () => {
  const w = makeWorld();
  let seed = 7;
  const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
  const parts = ['a', 'B', 'log', '-', '.', '_', 'é', '0', 'z'];
  const names = () => Array.from({ length: 1 + rnd(3) }, () => parts[rnd(parts.length)]).join('');
  const dirs = ['t'];
  fs.mkdirSync(w.p('t'));
  for (let i = 0; i < 300; i++) {
    const parent = dirs[rnd(dirs.length)];
    const rel = `${parent}/${names()}${rnd(2) ? '.log' : ''}`;
    if (fs.existsSync(w.p(rel))) continue;
    if (rnd(4) === 0) {
      fs.mkdirSync(w.p(rel));
      dirs.push(rel);
    } else fs.writeFileSync(w.p(rel), '');
  }
  // The oracle: every path below t whose name contains "log", any case, sorted by bytes.
  const all: string[] = [];
  const walk = (rel: string) => {
    for (const e of fs.readdirSync(w.p(rel), { withFileTypes: true })) {
      const r = `${rel}/${e.name}`;
      if (e.name.toLowerCase().includes('log')) all.push(r);
      if (e.isDirectory()) walk(r);
    }
  };
  walk('t');
  all.sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  assert.ok(all.length > 50, String(all.length));
  const root = WorldRoot.open(w.root);
  try {
    for (const limit of [1, 2, 3, 5, 8, 13, 21, 34, all.length - 1, all.length, 1000]) {
      const r = await searchTree(root, 't', { q: 'LOG', limit });
      assert.deepEqual(paths(r), all.slice(0, limit), `limit ${limit}`);
      assert.equal(r.truncated, limit < all.length, `limit ${limit}`);
    }
  } finally {
    root.close();
  }
});
