import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { makeWorld, openFds, snapshot, tree } from '../../../job/testing/world.ts';

test('delete removes a file, or a folder recursively', async () => {
  const w = makeWorld();
  fs.mkdirSync(w.p('plugins/Essentials/data'), { recursive: true });
  fs.writeFileSync(w.p('plugins/Essentials/config.yml'), 'x');
  fs.writeFileSync(w.p('plugins/Essentials/data/u.yml'), 'y');
  fs.writeFileSync(w.p('plugins/.hidden'), 'h');
  assert.deepEqual(await w.run({ op: 'delete', path: 'config/paper.yml' }), {});
  assert.equal(fs.existsSync(w.p('config/paper.yml')), false);
  assert.deepEqual(await w.run({ op: 'delete', path: 'plugins' }), {});
  assert.equal(fs.existsSync(w.p('plugins')), false);
});

test('keep-link/ removes only the link; a link to outside is removed and the outside kept', async () => {
  const w = makeWorld();
  fs.mkdirSync(w.p('kept'));
  fs.writeFileSync(w.p('kept/inner.txt'), 'stay');
  fs.symlinkSync('kept', w.p('keep-link'));
  fs.symlinkSync(w.outside, w.p('out-link'));
  fs.symlinkSync('../outside/secret.txt', w.p('out-file-link'));
  const outside = snapshot(w.outside);
  assert.deepEqual(await w.run({ op: 'delete', path: 'keep-link/' }), {});
  assert.equal(fs.existsSync(w.p('keep-link')), false);
  assert.equal(fs.readFileSync(w.p('kept/inner.txt'), 'utf8'), 'stay');
  assert.deepEqual(await w.run({ op: 'delete', path: 'out-link' }), {});
  assert.deepEqual(await w.run({ op: 'delete', path: 'out-file-link' }), {});
  assert.equal(fs.existsSync(w.p('out-link')), false);
  assert.deepEqual(snapshot(w.outside), outside);
});

test('a folder holding links to outside is deleted without following them', async () => {
  const w = makeWorld();
  fs.mkdirSync(w.p('mods/sub'), { recursive: true });
  fs.symlinkSync(w.outside, w.p('mods/out'));
  fs.symlinkSync('../../../outside', w.p('mods/sub/rel-out'));
  fs.symlinkSync(path.join(w.outside, 'secret.txt'), w.p('mods/sub/file-out'));
  const outside = snapshot(w.outside);
  assert.deepEqual(await w.run({ op: 'delete', path: 'mods' }), {});
  assert.equal(fs.existsSync(w.p('mods')), false);
  assert.deepEqual(snapshot(w.outside), outside);
});

test('root spellings are bad_path; escapes are bad_path and nothing outside is deleted; missing is not_found', async () => {
  const w = makeWorld();
  fs.symlinkSync(w.outside, w.p('out-link'));
  const before = snapshot(w.root);
  for (const p of ['', '.', './', 'config/..', '/']) {
    const r = await w.run({ op: 'delete', path: p });
    assert.equal(r.code, 'bad_path', p);
    if (p !== '/') assert.equal(r.error, "the server's root folder cannot be deleted");
  }
  const outside = snapshot(w.outside);
  for (const p of ['..', '../outside', '../outside/secret.txt', 'out-link/secret.txt', path.join(w.outside, 'secret.txt'), 'config/../../outside']) {
    assert.equal((await w.run({ op: 'delete', path: p })).code, 'bad_path', p);
  }
  assert.deepEqual(snapshot(w.outside), outside);
  assert.deepEqual(snapshot(w.root), before);
  assert.deepEqual(await w.run({ op: 'delete', path: 'nope' }), { code: 'not_found', error: 'nope does not exist' });
  assert.deepEqual(await w.run({ op: 'delete', path: 'nope/deeper' }), { code: 'not_found', error: 'nope/deeper does not exist' });
});

test('delete handles 100 nested folders, many entries and odd names, and leaks no fds', async () => {
  const w = makeWorld();
  const deep = Array.from({ length: 100 }, (_, i) => `n${i}`).join('/');
  fs.mkdirSync(w.p(`world/${deep}`), { recursive: true });
  fs.writeFileSync(w.p(`world/${deep}/leaf`), 'l');
  for (let i = 0; i < 300; i++) fs.writeFileSync(w.p(`world/f${i}`), '');
  fs.writeFileSync(Buffer.concat([Buffer.from(w.p('world/')), Buffer.from([0xff, 0x2e])]), 'bad utf8 name');
  fs.writeFileSync(w.p(`world/${'z'.repeat(255)}`), '');
  const before = openFds();
  assert.deepEqual(await w.run({ op: 'delete', path: 'world' }), {});
  assert.equal(fs.existsSync(w.p('world')), false);
  assert.equal(openFds(), before);
  assert.deepEqual(tree(w.root), ['config/', 'config/paper-global.yml', 'config/paper.yml', 'server.properties']);
});
