import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { makeWorld, writeReq } from './test-support.ts';
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
