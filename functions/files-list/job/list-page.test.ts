import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { modeDigits } from '../../../job/op-kit/list-entry.ts';
import { makeWorld } from '../../../job/testing/world.ts';
import type { Result } from '../../../lib/protocol/result.ts';
import { foldName, orderKey } from './list.ts';

const names = (r: Result) => r.entries!.map((e) => e.name);
const byteSorted = (xs: string[]) => [...xs].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));

/** A world with folder `d` holding `files` (empty files). */
function worldWith(files: string[]) {
  const w = makeWorld();
  fs.mkdirSync(w.p('d'));
  for (const n of files) fs.writeFileSync(w.p(`d/${n}`), '');
  return w;
}

const MIXED = ['b', 'B', 'a', 'Z', '10', '9', 'é', 'ä', 'zz', '_x', 'A-long-name.txt', '.hidden'];

test('a paged listing is in byte order of name, a page at a time: each name once, truncated until the last page', async () => {
  const w = worldWith(MIXED);
  const got: string[] = [];
  let after: string | undefined;
  let pages = 0;
  for (;;) {
    const r = await w.run({ op: 'list', path: 'd', limit: 5, ...(after === undefined ? {} : { after }) });
    assert.equal(r.code, undefined, r.error);
    pages++;
    got.push(...names(r));
    assert.ok(r.entries!.length <= 5);
    if (!r.truncated) break;
    assert.equal(r.entries!.length, 5, 'a page before the last is full');
    after = r.entries!.at(-1)!.name;
  }
  assert.deepEqual(got, byteSorted(MIXED));
  assert.equal(pages, 3);
  // A page exactly at the end is not truncated.
  const exact = await w.run({ op: 'list', path: 'd', limit: MIXED.length });
  assert.equal(exact.truncated, false);
  assert.equal(exact.entries!.length, MIXED.length);
  assert.equal((await w.run({ op: 'list', path: 'd', limit: MIXED.length - 1 })).truncated, true);
  assert.equal(typeof exact.avail, 'number', 'free bytes as in any listing');
});

test('after need not exist: the page starts at the first name above it; past the last name the page is empty', async () => {
  const w = worldWith(MIXED);
  assert.deepEqual(
    names(await w.run({ op: 'list', path: 'd', after: 'a0' })),
    byteSorted(MIXED).filter((n) => Buffer.compare(Buffer.from(n), Buffer.from('a0')) > 0),
  );
  assert.deepEqual(names(await w.run({ op: 'list', path: 'd', after: 'b', limit: 2 })), ['zz', 'ä']);
  const end = await w.run({ op: 'list', path: 'd', after: '\u{10ffff}' });
  assert.deepEqual(end.entries ?? [], []);
  assert.equal(end.truncated ?? false, false);
  // An empty after is no bound; no limit is the default page.
  assert.deepEqual(names(await w.run({ op: 'list', path: 'd', after: '' })), byteSorted(MIXED));
});

test('q is a substring of the name in any case, non-ASCII and decomposed forms included; an empty q filters nothing', async () => {
  const w = worldWith(['Äpfel.TXT', 'a\u0308pfel-2.txt', 'birne.txt', 'LEVEL.dat', 'level.dat_old', 'nolevel']);
  assert.deepEqual(names(await w.run({ op: 'list', path: 'd', q: 'äPF' })), byteSorted(['Äpfel.TXT', 'a\u0308pfel-2.txt']));
  assert.deepEqual(names(await w.run({ op: 'list', path: 'd', q: 'Level' })), ['LEVEL.dat', 'level.dat_old', 'nolevel']);
  assert.deepEqual(names(await w.run({ op: 'list', path: 'd', q: '.txt', limit: 1 })), ['a\u0308pfel-2.txt']);
  assert.equal((await w.run({ op: 'list', path: 'd', q: '.txt', limit: 1 })).truncated, true);
  assert.deepEqual(names(await w.run({ op: 'list', path: 'd', q: 'kiwi' })), []);
  assert.equal((await w.run({ op: 'list', path: 'd', q: '' })).entries!.length, 6);
  // q and after together: matching names after it.
  assert.deepEqual(names(await w.run({ op: 'list', path: 'd', q: 'level', after: 'level.dat_old' })), ['nolevel']);
  assert.equal(foldName('A\u0308'), 'ä');
});

test('the page size is held to 1..5000 whatever reaches the op; the default is 1000', async () => {
  const many = Array.from({ length: 5002 }, (_, i) => `f${String(i).padStart(5, '0')}`);
  const w = worldWith(many);
  const big = await w.run({ op: 'list', path: 'd', limit: 99_999 });
  assert.equal(big.entries!.length, 5000);
  assert.equal(big.truncated, true);
  const dflt = await w.run({ op: 'list', path: 'd', q: 'f' });
  assert.equal(dflt.entries!.length, 1000);
  assert.deepEqual(names(dflt), many.slice(0, 1000));
  assert.deepEqual(names(await w.run({ op: 'list', path: 'd', limit: 0 })), ['f00000']);
});

test('names that are not valid UTF-8 are listed as shown (U+FFFD), ordered and paged by that, without a crash', async () => {
  const w = worldWith(['a', 'm-\u{ffff}', 'z']);
  const raw = Buffer.concat([Buffer.from(w.p('d/')), Buffer.from('m-'), Buffer.from([0xff, 0xfe])]);
  fs.writeFileSync(raw, 'abc');
  const r = await w.run({ op: 'list', path: 'd', limit: 10 });
  assert.equal(r.code, undefined, r.error);
  // By raw bytes 0xff would sort after U+FFFF (ef bf bf); as shown, U+FFFD (ef bf bd) sorts before it.
  assert.deepEqual(names(r), ['a', 'm-\ufffd\ufffd', 'm-\u{ffff}', 'z']);
  assert.equal(r.entries![1]!.size, 3);
  assert.deepEqual(names(await w.run({ op: 'list', path: 'd', q: 'M-' })), ['m-\ufffd\ufffd', 'm-\u{ffff}']);
  // Paging one at a time with each page's last name as the next after sees every name once.
  const seen: string[] = [];
  let after: string | undefined;
  for (let i = 0; i < 10; i++) {
    const p = await w.run({ op: 'list', path: 'd', limit: 1, ...(after === undefined ? {} : { after }) });
    seen.push(...names(p));
    if (!p.truncated) break;
    after = names(p).at(-1)!;
  }
  assert.deepEqual(seen, names(r));
});

test('every entry carries its permission bits and whether it is a link; a link is listed as itself, never followed (both listings)', async () => {
  const w = worldWith([]);
  fs.writeFileSync(w.p('d/plain'), 'hello');
  fs.chmodSync(w.p('d/plain'), 0o640);
  fs.writeFileSync(w.p('d/setuid'), '');
  fs.chmodSync(w.p('d/setuid'), 0o4755);
  fs.mkdirSync(w.p('d/sub'));
  fs.chmodSync(w.p('d/sub'), 0o755);
  fs.symlinkSync('sub', w.p('d/to-sub'));
  fs.symlinkSync('/etc/passwd', w.p('d/to-outside'));
  fs.symlinkSync('missing', w.p('d/dangling'));
  for (const req of [{}, { limit: 10 }]) {
    const r = await w.run({ op: 'list', path: 'd', ...req });
    assert.equal(r.code, undefined, r.error);
    const by = Object.fromEntries(r.entries!.map((e) => [e.name, e]));
    assert.deepEqual(Object.keys(by).sort(), ['dangling', 'plain', 'setuid', 'sub', 'to-outside', 'to-sub']);
    assert.deepEqual([by.plain!.mode, by.plain!.is_symlink, by.plain!.size], ['640', false, 5]);
    assert.equal(by.setuid!.mode, '755', 'the setuid bit is not a permission digit');
    assert.deepEqual([by.sub!.mode, by.sub!.is_dir, by.sub!.is_symlink], ['755', true, false]);
    for (const [n, target] of [
      ['to-sub', 'sub'],
      ['to-outside', '/etc/passwd'],
      ['dangling', 'missing'],
    ] as const) {
      assert.deepEqual([by[n]!.is_symlink, by[n]!.is_dir, by[n]!.size, by[n]!.mode], [true, false, target.length, '777'], n);
    }
  }
  assert.equal(modeDigits(0o100644), '644');
  assert.equal(modeDigits(0o7), '007');
  assert.equal(modeDigits(0o40000n | 0o1777n), '777');
});

test("the editor's working names are never listed in a page, and the withheld file keeps size 0", async () => {
  const w = makeWorld();
  fs.writeFileSync(w.p('config/.felis-edit-0123456789ab'), 'temp');
  fs.mkdirSync(w.p('config/.felis-unzip-0123456789ab'));
  fs.writeFileSync(w.p('config/.felis-edit-notes.txt'), 'a user file');
  const r = await w.run({ op: 'list', path: 'config', limit: 1000 });
  assert.equal(r.code, undefined, r.error);
  assert.deepEqual(names(r), ['.felis-edit-notes.txt', 'paper-global.yml', 'paper.yml']);
  assert.equal(r.entries!.find((e) => e.name === 'paper-global.yml')!.size, 0, 'withheld');
  assert.ok(r.entries!.find((e) => e.name === 'paper.yml')!.size > 0);
  // The working names do not take a place in the page either.
  const one = await w.run({ op: 'list', path: 'config', limit: 1 });
  assert.deepEqual(names(one), ['.felis-edit-notes.txt']);
  assert.equal(one.truncated, true);
});

test("paged refusals are the listing's: a file, a missing folder, an escape", async () => {
  const w = makeWorld();
  assert.equal((await w.run({ op: 'list', path: 'server.properties', limit: 5 })).code, 'bad_path');
  assert.equal((await w.run({ op: 'list', path: 'nope', q: 'x' })).code, 'not_found');
  assert.equal((await w.run({ op: 'list', path: '../etc', after: 'a' })).code, 'bad_path');
});

test('names as latin1 text order as their bytes do (Buffer.compare); a name that is not UTF-8 orders as shown', () => {
  const xs = ['', 'a', 'ab', 'b', 'B', 'é', 'e\u0301', '\u{1f600}', '\u{ffff}', 'a\u0000', 'zz'].map((s) => Buffer.from(s));
  const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  for (const a of xs) for (const b of xs) assert.equal(cmp(orderKey(a.toString('latin1')), orderKey(b.toString('latin1'))), Buffer.compare(a, b), `${a.toString('hex')} vs ${b.toString('hex')}`);
  assert.equal(orderKey(Buffer.from([0x6d, 0xff]).toString('latin1')), Buffer.from('m\ufffd').toString('latin1'));
  assert.equal(orderKey('plain'), 'plain');
});
