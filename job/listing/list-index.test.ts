import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import type { Result } from '../../lib/protocol/result.ts';
import { makeWorld } from '../testing/world.ts';
import { ListIndexes, type ListIndexesOptions, RACY_NS } from './list-index.ts';

/** A fixed free space: the machine's changes between two listings compared. */
const statfs = () => ({ bavail: 1n, bsize: 4096n });
/** Nanoseconds well past any mtime the test makes: an index built "now" is not racy. */
const later = () => BigInt(Date.now() + 60_000) * 1_000_000n;

function scratch(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'felis-list-index-'));
  after(() => fs.rmSync(d, { recursive: true, force: true }));
  return d;
}

function indexes(opts: ListIndexesOptions = {}) {
  return new ListIndexes(scratch(), { minEntries: 50, now: later, ...opts });
}

/** A listing with `ix`, and then its index built: the next page sees it. */
async function runIx(w: ReturnType<typeof makeWorld>, ix: ListIndexes, req: Parameters<ReturnType<typeof makeWorld>['run']>[0]): Promise<Result> {
  const r = await w.run(req, { listIndexes: ix, statfs });
  await ix.settled();
  return r;
}

/** A folder `d` of `n` files with mixed names: digits, cases, accents, a folder, a link, a working file, names not UTF-8. */
function bigWorld(n = 700) {
  const w = makeWorld();
  const d = w.p('d');
  fs.mkdirSync(d);
  for (let i = 0; i < n; i++) fs.writeFileSync(path.join(d, `${['f', 'F', 'é', 'ä', '_', 'a'][i % 6]}${(i * 7919) % 1000}.txt`), 'x'.repeat(i % 5));
  fs.mkdirSync(path.join(d, 'a-folder'));
  fs.symlinkSync('f1.txt', path.join(d, 'a-link'));
  fs.writeFileSync(path.join(d, '.felis-edit-working'), '');
  for (const raw of [
    [0xff, 0x41],
    [0x41, 0xff],
    [0x66, 0x31, 0xfe],
  ])
    fs.writeFileSync(Buffer.concat([Buffer.from(d + '/'), Buffer.from(raw)]), '');
  return w;
}

/** Every page of a listing, as the op answers them. */
async function allPages(run: (q: { limit: number; after?: string; q?: string }) => Promise<Result>, limit: number, q?: string): Promise<Result[]> {
  const out: Result[] = [];
  let afterName: string | undefined;
  for (;;) {
    const r = await run({ limit, ...(afterName === undefined ? {} : { after: afterName }), ...(q ? { q } : {}) });
    assert.equal(r.code, undefined, r.error);
    out.push(r);
    if (!r.truncated) return out;
    afterName = r.entries!.at(-1)!.name;
  }
}

test("pages from an index equal the scan's: every page, afters, q", async () => {
  const w = bigWorld();
  const ix = indexes();
  const scan = (q: object) => w.run({ op: 'list', path: 'd', ...q }, { statfs });
  const fromIndex = (q: object) => runIx(w, ix, { op: 'list', path: 'd', ...q });
  await fromIndex({ limit: 10 }); // builds it
  assert.equal(ix.stats.built, 1);
  for (const [limit, q] of [
    [37, undefined],
    [1000, undefined],
    [1, 'A-F'],
    [50, 'é'],
    [20, 'f1'],
    [5, 'zzz-nothing'],
  ] as const) {
    const hits = ix.stats.hits;
    const a = await allPages(fromIndex, limit, q);
    assert.ok(ix.stats.hits > hits, 'served from the index');
    assert.deepEqual(a, await allPages(scan, limit, q), `limit ${limit} q ${q}`);
  }
  for (const afterName of ['', 'a', 'f5', 'f999.txt', 'é', '\ufffdA', 'zzzz', 'A']) {
    const q = { limit: 25, ...(afterName ? { after: afterName } : {}) };
    assert.deepEqual(await fromIndex(q), await scan(q), `after ${afterName}`);
  }
  assert.equal(ix.stats.dropped, 0);
});

test('a change to the folder (add, delete, rename inside) is seen on the next page; the index is dropped', async () => {
  const w = bigWorld();
  const ix = indexes();
  const q = { limit: 1000 };
  const fromIndex = () => runIx(w, ix, { op: 'list', path: 'd', ...q });
  const scan = () => w.run({ op: 'list', path: 'd', ...q }, { statfs });
  for (const change of [() => fs.writeFileSync(w.p('d/0-new'), ''), () => fs.rmSync(w.p('d/f0.txt')), () => fs.renameSync(w.p('d/a-folder'), w.p('d/b-folder'))]) {
    await fromIndex(); // builds an index (or uses it)
    assert.equal(ix.size, 1);
    const dropped = ix.stats.dropped;
    const hits = ix.stats.hits;
    change();
    const r = await fromIndex();
    assert.deepEqual(r, await scan());
    assert.equal(ix.stats.hits, hits, 'not from the old index');
    assert.equal(ix.stats.dropped, dropped + 1);
  }
  assert.ok(names(await fromIndex()).includes('0-new'));
  assert.ok(!names(await fromIndex()).includes('f0.txt'));
  assert.ok(names(await fromIndex()).includes('b-folder'));
});

const names = (r: Result) => r.entries!.map((e) => e.name);

test("racy: an index whose scan began within 2 s of the folder's mtime is not trusted", async () => {
  const w = bigWorld();
  const mtime = fs.statSync(w.p('d'), { bigint: true }).mtimeNs;
  let now = mtime + RACY_NS - 1n;
  const ix = indexes({ now: () => now });
  await runIx(w, ix, { op: 'list', path: 'd', limit: 10 });
  await runIx(w, ix, { op: 'list', path: 'd', limit: 10 });
  assert.equal(ix.stats.hits, 0);
  assert.equal(ix.size, 0, 'none built from a racy scan');
  // Past the window, a scan builds one that the next page uses.
  now = mtime + RACY_NS + 1n;
  await runIx(w, ix, { op: 'list', path: 'd', limit: 10 });
  const r = await runIx(w, ix, { op: 'list', path: 'd', limit: 10, after: 'f' });
  assert.equal(ix.stats.hits, 1);
  assert.deepEqual(r, await w.run({ op: 'list', path: 'd', limit: 10, after: 'f' }, { statfs }));
});

test('a small folder gets no index, and the indexes kept are bounded (LRU, bytes)', async () => {
  const w = makeWorld();
  for (let k = 0; k < 6; k++) {
    fs.mkdirSync(w.p(`d${k}`));
    for (let i = 0; i < 60; i++) fs.writeFileSync(w.p(`d${k}/n${i}`), '');
  }
  fs.mkdirSync(w.p('small'));
  fs.writeFileSync(w.p('small/one'), '');
  const ix = indexes();
  await runIx(w, ix, { op: 'list', path: 'small', limit: 10 });
  assert.equal(ix.size, 0);
  for (let k = 0; k < 6; k++) await runIx(w, ix, { op: 'list', path: `d${k}`, limit: 10 });
  assert.equal(ix.size, 4);
  // The most recent are kept: d5 is served from its index, d0 is not.
  const hits = ix.stats.hits;
  await runIx(w, ix, { op: 'list', path: 'd5', limit: 10 });
  assert.equal(ix.stats.hits, hits + 1);
  await runIx(w, ix, { op: 'list', path: 'd0', limit: 10 });
  assert.equal(ix.stats.hits, hits + 1);
  const tiny = indexes({ maxBytes: 100 });
  await runIx(w, tiny, { op: 'list', path: 'd1', limit: 10 });
  assert.equal(tiny.size, 0, 'an index over the byte cap is not kept');
  ix.close();
  assert.equal(ix.size, 0);
});
