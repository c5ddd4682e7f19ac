import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { LEDGER_DIR } from '../../lib/protocol/working-names.ts';
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

test('move-many: a rename the disk refuses undoes the batch: refused with that move\'s code and path, nothing changed', async () => {
  const w = filled();
  const before = snapshot(w.root);
  let n = 0;
  const r = await move(w, [
    { from: 'plugins/x.jar', to: 'archive/x.jar' },
    { from: 'plugins/a', to: 'archive/a' },
    { from: 'plugins/y.jar', to: 'archive/y.jar' },
  ], {
    rename: (from, to) => {
      if (++n === 2) throw Object.assign(new Error('injected'), { code: 'EIO' });
      fs.renameSync(from, to);
    },
  });
  assert.equal(r.code, 'bad_path');
  assert.equal(r.entry, 'plugins/a');
  assert.match(r.error ?? '', /input\/output error.*; nothing of the batch was changed$/);
  assert.equal(n, 3, 'the first move was undone');
  assert.deepEqual(snapshot(w.root), before);
});

test('move-many writes every move down before the first, as the kernel names its paths (no links), and leaves no journal', async () => {
  const w = filled();
  fs.symlinkSync('plugins', w.p('pl'));
  const steps: string[] = [];
  const journals: string[] = [];
  const r = await move(w, [{ from: 'pl/x.jar', to: 'archive/x.jar' }, { from: 'plugins/y.jar', to: 'pl/b/y.jar' }], {
    journalStep: (s) => {
      steps.push(s);
      if (s !== 'state:placing') return;
      for (const n of fs.readdirSync(w.root).filter((x) => x.startsWith('.felis-unzip-'))) journals.push(fs.readFileSync(w.p(`${n}/moves-0.json`), 'utf8'));
    },
  });
  assert.deepEqual(r, { done: ['pl/x.jar', 'plugins/y.jar'], failed: [] });
  assert.deepEqual(journals.map((j) => JSON.parse(j)), [[['move', 'plugins/x.jar', 'archive/x.jar'], ['move', 'plugins/y.jar', 'plugins/b/y.jar']]]);
  assert.deepEqual(steps, ['state:staging', 'state:placing', 'move:1', 'move:2', 'state:committed', 'work-removed', 'journal-removed']);
  assert.equal(fs.readFileSync(w.p('plugins/b/y.jar'), 'utf8'), 'y');
  assert.deepEqual(fs.readdirSync(w.root).filter((n) => n.startsWith('.felis-') && n !== LEDGER_DIR), []);
});
