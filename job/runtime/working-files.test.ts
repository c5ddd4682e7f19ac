import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { makeWorld, snapshot, writeReq } from '../testing/world.ts';
import { isWorkingName, pathHasWorkingName, STALE_AFTER_MS, sweepStale } from './working-files.ts';

const TEMP = '.felis-edit-0123456789ab';
/** A working file left by a dead Job `ageMs` ago. */
const leave = (file: string, ageMs: number, text = 'half') => {
  fs.writeFileSync(file, text);
  const t = (Date.now() - ageMs) / 1000;
  fs.utimesSync(file, t, t);
};

test('working names are exactly .felis-edit- and 12 lowercase hex digits', () => {
  assert.equal(isWorkingName(TEMP), true);
  assert.equal(isWorkingName(Buffer.from(TEMP)), true);
  for (const n of ['.felis-edit-0123456789a', '.felis-edit-0123456789abc', '.felis-edit-0123456789AB', 'x.felis-edit-0123456789ab', '.felis-edit-', 'felis-edit-0123456789ab']) {
    assert.equal(isWorkingName(n), false, n);
  }
  assert.equal(pathHasWorkingName(`config/${TEMP}`), true);
  assert.equal(pathHasWorkingName(`./${TEMP}/x`), true);
  assert.equal(pathHasWorkingName('config/paper.yml'), false);
});

test('listings leave working files out, and they do not count toward the entry limit', async () => {
  const w = makeWorld();
  leave(w.p(`config/${TEMP}`), 0);
  const r = await w.run({ op: 'list', path: 'config' });
  assert.deepEqual(r.entries!.map((e) => e.name).sort(), ['paper-global.yml', 'paper.yml']);
});

test('a working file cannot be read, deleted, renamed, written or created by name', async () => {
  const w = makeWorld();
  leave(w.p(`config/${TEMP}`), 0, 'secret-ish half write');
  for (const op of ['read', 'delete'] as const) {
    assert.deepEqual(await w.run({ op, path: `config/${TEMP}` }), { code: 'not_found', error: `config/${TEMP} does not exist` });
  }
  assert.equal((await w.run({ op: 'rename', path: `config/${TEMP}`, to: 'config/x' })).code, 'not_found');
  assert.equal((await w.run({ op: 'rename', path: 'config/paper.yml', to: `config/${TEMP}` })).code, 'bad_path');
  assert.equal((await w.run(writeReq(`config/${TEMP}`, 'x'))).code, 'bad_path');
  assert.equal((await w.run({ op: 'mkdir', path: `.felis-edit-aaaaaaaaaaaa` })).code, 'bad_path');
  assert.equal(fs.readFileSync(w.p(`config/${TEMP}`), 'utf8'), 'secret-ish half write');
  assert.equal(fs.existsSync(w.p('.felis-edit-aaaaaaaaaaaa')), false);
});

test('each mutation removes stale working files in the folders it works in, and only there', async () => {
  const w = makeWorld();
  fs.mkdirSync(w.p('plugins'));
  const stale = STALE_AFTER_MS + 5_000;
  const cases: [string, () => Promise<unknown>][] = [
    ['config', () => w.run(writeReq('config/paper.yml', 'paper: false\n'))],
    ['plugins', () => w.run({ op: 'mkdir', path: 'plugins/new' })],
    ['', () => w.run({ op: 'delete', path: 'gone.txt' })],
  ];
  fs.writeFileSync(w.p('gone.txt'), 'x');
  for (const [dir, mutate] of cases) {
    const old = w.p(`${dir ? dir + '/' : ''}.felis-edit-00000000000a`);
    const fresh = w.p(`${dir ? dir + '/' : ''}.felis-edit-00000000000b`);
    leave(old, stale);
    leave(fresh, 1_000);
    await mutate();
    assert.equal(fs.existsSync(old), false, `stale one in ${dir || 'the root'} removed`);
    assert.equal(fs.existsSync(fresh), true, `fresh one in ${dir || 'the root'} kept (a live write may own it)`);
  }
  // A read is no mutation: it removes nothing.
  leave(w.p('config/.felis-edit-00000000000c'), stale);
  await w.run({ op: 'read', path: 'config/paper.yml' });
  assert.equal(fs.existsSync(w.p('config/.felis-edit-00000000000c')), true);
  // A rename sweeps both folders.
  leave(w.p('plugins/.felis-edit-00000000000d'), stale);
  await w.run({ op: 'rename', path: 'config/paper.yml', to: 'plugins/paper.yml' });
  assert.equal(fs.existsSync(w.p('config/.felis-edit-00000000000c')), false);
  assert.equal(fs.existsSync(w.p('plugins/.felis-edit-00000000000d')), false);
});

test('the sweep removes only regular files: a stale-named folder or link stays, and a link target is never touched', () => {
  const w = makeWorld();
  fs.mkdirSync(w.p('.felis-edit-00000000000e'));
  fs.writeFileSync(w.p('target.txt'), 'keep');
  fs.symlinkSync('target.txt', w.p('.felis-edit-00000000000f'));
  const old = (Date.now() - STALE_AFTER_MS * 2) / 1000;
  fs.utimesSync(w.p('.felis-edit-00000000000e'), old, old);
  fs.lutimesSync(w.p('.felis-edit-00000000000f'), old, old);
  fs.utimesSync(w.p('target.txt'), old, old);
  const fd = fs.openSync(w.root, 'r');
  try {
    assert.equal(sweepStale(fd), 0);
  } finally {
    fs.closeSync(fd);
  }
  assert.ok(fs.statSync(w.p('.felis-edit-00000000000e')).isDirectory());
  assert.equal(fs.readFileSync(w.p('target.txt'), 'utf8'), 'keep');
});

const UNZIP = '.felis-unzip-0123456789ab';
const STAGING = '.felis-edit-aaaaaaaaaaaa';

/** A world holding an extraction's working folder, an upload's staging folder and links to both. */
function withWorkingFolders() {
  const w = makeWorld();
  for (const d of [UNZIP, `config/${UNZIP}`]) {
    fs.mkdirSync(w.p(`${d}/new`), { recursive: true, mode: 0o700 });
    fs.mkdirSync(w.p(`${d}/old`), { mode: 0o700 });
    fs.writeFileSync(w.p(`${d}/new/f.txt`), 'half-extracted');
  }
  fs.mkdirSync(w.p(STAGING), { mode: 0o700 });
  fs.writeFileSync(w.p(`${STAGING}/data`), 'half-uploaded');
  fs.writeFileSync(w.p(`${STAGING}/state.json`), JSON.stringify({ id: 'x', path: 'a', size: 99, received: 13, parts: [], touched: Date.now() }));
  fs.symlinkSync(UNZIP, w.p('via'));
  fs.symlinkSync(`${UNZIP}/new/f.txt`, w.p('via-file'));
  fs.symlinkSync(STAGING, w.p('via-staging'));
  // Lookalikes are the world's own: one hex digit more, capitals.
  fs.mkdirSync(w.p('.felis-unzip-0123456789abc'));
  fs.writeFileSync(w.p('.felis-unzip-0123456789abc/mine.txt'), 'mine');
  fs.writeFileSync(w.p('.felis-edit-0123456789AB'), 'mine too');
  return w;
}

test("working names: the editor's and an upload's (.felis-edit-<12 hex>) and an extraction's (.felis-unzip-<12 hex>), exactly", () => {
  assert.equal(isWorkingName(UNZIP), true);
  assert.equal(isWorkingName(STAGING), true);
  for (const n of ['.felis-unzip-0123456789abc', '.felis-unzip-0123456789a', '.felis-unzip-0123456789AB', '.felis-unzip-', 'x.felis-unzip-0123456789ab']) assert.equal(isWorkingName(n), false, n);
  assert.equal(pathHasWorkingName(`config/${UNZIP}/new/f.txt`), true);
});

test('no working folder is listed, and none can be read, deleted, renamed, written, zipped or downloaded, by name or through a link', async () => {
  const w = withWorkingFolders();
  const names = (await w.run({ op: 'list', path: '' })).entries!.map((e) => e.name);
  assert.ok(!names.includes(UNZIP) && !names.includes(STAGING), names.join());
  assert.ok(names.includes('.felis-unzip-0123456789abc') && names.includes('.felis-edit-0123456789AB'), 'lookalikes are listed');
  assert.ok(!(await w.run({ op: 'list', path: 'config' })).entries!.some((e) => e.name === UNZIP));
  const before = snapshot(w.root);
  const nf = async (req: Parameters<typeof w.run>[0], what: string) => assert.equal((await w.run(req)).code, 'not_found', what);
  for (const p of [UNZIP, `${UNZIP}/new`, 'via', 'via/new', 'via-staging', `${STAGING}`]) await nf({ op: 'list', path: p }, `list ${p}`);
  for (const p of [`${UNZIP}/new/f.txt`, `config/${UNZIP}/new/f.txt`, 'via-file', 'via/new/f.txt', `${STAGING}/data`, 'via-staging/data']) await nf({ op: 'read', path: p }, `read ${p}`);
  for (const p of [UNZIP, `${UNZIP}/new/f.txt`, 'via/new/f.txt', STAGING, `${STAGING}/data`, 'via-staging/data']) await nf({ op: 'delete', path: p }, `delete ${p}`);
  for (const p of [`${UNZIP}/new/f.txt`, 'via/new/f.txt', `${STAGING}/data`]) await nf({ op: 'rename', path: p, to: 'taken-out.txt' }, `rename ${p}`);
  for (const p of [UNZIP, `${UNZIP}/new`, 'via', `${STAGING}`, 'via-staging']) await nf({ op: 'zip', path: p, to: 'out.zip' }, `zip ${p}`);
  assert.equal((await w.run({ op: 'rename', path: 'config/paper.yml', to: `${UNZIP}/new/paper.yml` })).code, 'bad_path');
  assert.notEqual((await w.run({ op: 'rename', path: 'config/paper.yml', to: 'via/new/paper.yml' })).code, undefined, 'not moved into it through a link');
  for (const p of [`${UNZIP}/new/g.txt`, `${STAGING}/data`]) assert.equal((await w.run(writeReq(p, 'x'))).code, 'bad_path', `write ${p}`);
  assert.notEqual((await w.run(writeReq('via/new/g.txt', 'x'))).code, undefined, 'not written through a link');
  assert.equal((await w.run({ op: 'mkdir', path: `${UNZIP}/new/d` })).code, 'bad_path');
  // The ops above changed nothing (the refused mutations swept nothing either).
  assert.deepEqual(snapshot(w.root), before);

  const { openDownload } = await import('../export/open.ts');
  const { WorldRoot } = await import('../volume/root.ts');
  const root = WorldRoot.open(w.root);
  try {
    for (const [p, dir] of [
      [`${UNZIP}/new/f.txt`, false],
      ['via-file', false],
      ['via/new/f.txt', false],
      ['via', true],
      [UNZIP, true],
      ['via-staging', true],
      ['via-staging/data', false],
    ] as const) {
      const d = openDownload(root, p, dir);
      assert.equal('code' in d ? d.code : 'opened', 'not_found', `download ${p}`);
      if ('fd' in d) fs.closeSync(d.fd);
    }
  } finally {
    root.close();
  }
  // A zip of the folder holding them leaves them out.
  assert.equal((await w.run({ op: 'zip', path: 'config', to: 'c.zip' })).files, 1, 'paper.yml alone (the secret is withheld)');
  assert.ok(!fs.readFileSync(w.p('c.zip')).includes('new/f.txt'));
});

test("the next mutation removes an extraction's stale working folder in its folder; a folder of the world with a lookalike or a reserved name made by someone else stays", async () => {
  const w = withWorkingFolders();
  // A folder with the exact reserved name that is not ours (not 0700): hidden, never destroyed.
  fs.mkdirSync(w.p('config/.felis-unzip-fedcba987654'), { mode: 0o755 });
  fs.chmodSync(w.p('config/.felis-unzip-fedcba987654'), 0o755);
  fs.writeFileSync(w.p('config/.felis-unzip-fedcba987654/keep.txt'), 'keep');
  await w.run({ op: 'read', path: 'config/paper.yml' });
  assert.ok(fs.existsSync(w.p(`config/${UNZIP}`)), 'a read removes nothing');
  assert.equal((await w.run(writeReq('config/new.txt', 'n'))).code, undefined);
  assert.ok(!fs.existsSync(w.p(`config/${UNZIP}`)), 'removed by the write in its folder');
  assert.equal(fs.readFileSync(w.p('config/.felis-unzip-fedcba987654/keep.txt'), 'utf8'), 'keep');
  assert.ok(fs.existsSync(w.p(UNZIP)), 'the one in another folder stays until a mutation there');
  assert.equal((await w.run({ op: 'mkdir', path: 'newdir' })).code, undefined);
  assert.ok(!fs.existsSync(w.p(UNZIP)), 'removed by the mkdir in the root');
  assert.equal(fs.readFileSync(w.p('.felis-unzip-0123456789abc/mine.txt'), 'utf8'), 'mine', 'the lookalike stays');
  assert.ok(fs.lstatSync(w.p('via')).isSymbolicLink(), "links to it are the world's: they stay");
});
