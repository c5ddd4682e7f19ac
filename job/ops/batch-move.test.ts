import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { makeWorld, snapshot, type World } from '../test-support.ts';
import type { Move } from '../../lib/protocol/batch-env.ts';

const move = (w: World, moves: Move[], opts?: Parameters<World['run']>[1]) => w.run({ op: 'move-many', path: '.', batch: { moves } }, opts);

function filled(): World {
  const w = makeWorld();
  fs.mkdirSync(w.p('plugins/a/data'), { recursive: true });
  fs.mkdirSync(w.p('plugins/b'));
  fs.mkdirSync(w.p('archive'));
  fs.writeFileSync(w.p('plugins/a/data/u.yml'), 'u');
  fs.writeFileSync(w.p('plugins/x.jar'), 'x');
  fs.writeFileSync(w.p('plugins/y.jar'), 'y');
  fs.symlinkSync(w.outside, w.p('out'));
  return w;
}

test('move-many renames and moves into other folders, in order, without replacing', async () => {
  const w = filled();
  const r = await move(w, [
    { from: 'plugins/x.jar', to: 'archive/x.jar' },
    { from: 'plugins/y.jar', to: 'plugins/y-old.jar' },
    { from: 'plugins/a', to: 'archive/a' },
  ]);
  assert.deepEqual(r, { done: ['plugins/x.jar', 'plugins/y.jar', 'plugins/a'], failed: [] });
  assert.equal(fs.readFileSync(w.p('archive/x.jar'), 'utf8'), 'x');
  assert.equal(fs.readFileSync(w.p('plugins/y-old.jar'), 'utf8'), 'y');
  assert.equal(fs.readFileSync(w.p('archive/a/data/u.yml'), 'utf8'), 'u');
});

test('move-many: the first bad move is refused with its code and path, and nothing changed', async () => {
  const ok = { from: 'plugins/x.jar', to: 'archive/x.jar' };
  const cases: Array<[Move[], string, string]> = [
    [[ok, { from: 'plugins/y.jar', to: '../outside/y.jar' }], 'bad_path', '../outside/y.jar'],
    [[ok, { from: 'out/secret.txt', to: 'archive/s.txt' }], 'bad_path', 'out/secret.txt'],
    [[ok, { from: 'plugins/nope', to: 'archive/nope' }], 'not_found', 'plugins/nope'],
    [[ok, { from: 'plugins/y.jar', to: 'missing/y.jar' }], 'not_found', 'missing/y.jar'],
    [[ok, { from: 'plugins/y.jar', to: 'plugins/b' }], 'exists', 'plugins/b'],
    [[ok, { from: 'plugins/y.jar', to: 'archive/x.jar' }], 'batch_conflict', 'archive/x.jar'],
    [[ok, { from: 'plugins//x.jar', to: 'archive/z.jar' }], 'batch_conflict', 'plugins//x.jar'],
    [[{ from: 'plugins/a', to: 'archive/a' }, { from: 'plugins/a/data', to: 'archive/data' }], 'batch_conflict', 'plugins/a/data'],
    [[{ from: 'plugins/a/data', to: 'archive/data' }, { from: 'plugins/a', to: 'archive/a' }], 'batch_conflict', 'plugins/a'],
    [[{ from: 'plugins/a', to: 'archive/a' }, { from: 'plugins/x.jar', to: 'plugins/a/x.jar' }], 'batch_conflict', 'plugins/a/x.jar'],
    [[ok, { from: 'plugins/a', to: 'plugins/a/data/a' }], 'bad_path', 'plugins/a/data/a'],
    [[ok, { from: 'config', to: 'archive/config' }], 'bad_path', 'config'],
    [[ok, { from: 'server.properties', to: 'archive/sp' }], 'bad_path', 'server.properties'],
    [[ok, { from: 'plugins/y.jar', to: 'plugins/.felis-edit-0123456789ab' }], 'bad_path', 'plugins/.felis-edit-0123456789ab'],
    [[ok, { from: 'plugins/y.jar', to: '.' }], 'bad_path', '.'],
  ];
  for (const [moves, code, path] of cases) {
    const w = filled();
    const before = snapshot(w.root);
    const r = await move(w, moves);
    const what = JSON.stringify(moves);
    assert.equal(r.code, code, what);
    assert.equal(r.entry, path, what);
    assert.deepEqual(snapshot(w.root), before, `nothing changed: ${what}`);
  }
});

test('move-many: a rename the disk refuses is a failed item; the rest are moved', async () => {
  const w = filled();
  let n = 0;
  const r = await move(w, [
    { from: 'plugins/x.jar', to: 'archive/x.jar' },
    { from: 'plugins/y.jar', to: 'archive/y.jar' },
  ], {
    rename: (from, to) => {
      if (++n === 1) throw Object.assign(new Error('injected'), { code: 'EIO' });
      fs.renameSync(from, to);
    },
  });
  assert.deepEqual(r.done, ['plugins/y.jar']);
  assert.equal(r.failed?.length, 1);
  assert.equal(r.failed![0]!.path, 'plugins/x.jar');
  assert.equal(r.failed![0]!.error.code, 'bad_path');
  assert.match(r.failed![0]!.error.message, /input\/output error/);
  assert.equal(fs.existsSync(w.p('plugins/x.jar')), true);
});
