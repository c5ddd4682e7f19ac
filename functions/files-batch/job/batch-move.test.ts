import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { makeWorld, snapshot, type World } from '../../../job/testing/world.ts';
import type { Move } from '../../../lib/protocol/batch-env.ts';
import { LEDGER_DIR } from '../../../lib/protocol/working-names.ts';

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
    [
      [
        { from: 'plugins/a', to: 'archive/a' },
        { from: 'plugins/a/data', to: 'archive/data' },
      ],
      'batch_conflict',
      'plugins/a/data',
    ],
    [
      [
        { from: 'plugins/a/data', to: 'archive/data' },
        { from: 'plugins/a', to: 'archive/a' },
      ],
      'batch_conflict',
      'plugins/a',
    ],
    [
      [
        { from: 'plugins/a', to: 'archive/a' },
        { from: 'plugins/x.jar', to: 'plugins/a/x.jar' },
      ],
      'batch_conflict',
      'plugins/a/x.jar',
    ],
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

test("move-many: a rename the disk refuses undoes the batch: refused with that move's code and path, nothing changed", async () => {
  const w = filled();
  const before = snapshot(w.root);
  let n = 0;
  const r = await move(
    w,
    [
      { from: 'plugins/x.jar', to: 'archive/x.jar' },
      { from: 'plugins/a', to: 'archive/a' },
      { from: 'plugins/y.jar', to: 'archive/y.jar' },
    ],
    {
      rename: (from, to) => {
        if (++n === 2) throw Object.assign(new Error('injected'), { code: 'EIO' });
        fs.renameSync(from, to);
      },
    },
  );
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
  const r = await move(
    w,
    [
      { from: 'pl/x.jar', to: 'archive/x.jar' },
      { from: 'plugins/y.jar', to: 'pl/b/y.jar' },
    ],
    {
      journalStep: (s) => {
        steps.push(s);
        if (s !== 'state:placing') return;
        for (const n of fs.readdirSync(w.root).filter((x) => x.startsWith('.felis-unzip-'))) journals.push(fs.readFileSync(w.p(`${n}/moves-0.json`), 'utf8'));
      },
    },
  );
  assert.deepEqual(r, { done: ['pl/x.jar', 'plugins/y.jar'], failed: [] });
  assert.deepEqual(
    journals.map((j) => JSON.parse(j)),
    [
      [
        ['move', 'plugins/x.jar', 'archive/x.jar'],
        ['move', 'plugins/y.jar', 'plugins/b/y.jar'],
      ],
    ],
  );
  assert.deepEqual(steps, ['state:staging', 'state:placing', 'move:1', 'move:2', 'state:committed', 'work-removed', 'journal-removed']);
  assert.equal(fs.readFileSync(w.p('plugins/b/y.jar'), 'utf8'), 'y');
  assert.deepEqual(
    fs.readdirSync(w.root).filter((n) => n.startsWith('.felis-') && n !== LEDGER_DIR),
    [],
  );
});

test('move-many: a relative link taken where it leads above the root refuses the whole batch, even as its third move; links that stay inside move', async () => {
  const links = (): World => {
    const w = filled();
    fs.mkdirSync(w.p('plugins/links'));
    fs.symlinkSync('../../config/paper-global.yml', w.p('plugins/links/secret-sym'));
    fs.symlinkSync('../x.jar', w.p('plugins/links/jar'));
    return w;
  };
  const ok1 = { from: 'plugins/x.jar', to: 'archive/x.jar' };
  const ok2 = { from: 'plugins/y.jar', to: 'y.jar' };
  const cases: Array<[Move[], string, RegExp]> = [
    [
      [ok1, ok2, { from: 'plugins/links/secret-sym', to: 'secret-sym' }],
      'plugins/links/secret-sym',
      /^plugins\/links\/secret-sym is a link that would lead outside the world from secret-sym; nothing was moved$/,
    ],
    [[ok1, ok2, { from: 'plugins/links', to: 'links' }], 'plugins/links', /^plugins\/links\/secret-sym is a link that would lead outside the world from links\/secret-sym;/],
  ];
  for (const [moves, path, message] of cases) {
    const w = links();
    const before = snapshot(w.root);
    const r = await move(w, moves);
    assert.equal(r.code, 'bad_path', JSON.stringify(r));
    assert.equal(r.entry, path);
    assert.match(r.error!, message);
    assert.deepEqual(snapshot(w.root), before, 'nothing of the batch moved');
  }
  // A link that stays inside moves, with the rest of the batch.
  const w = links();
  const r = await move(w, [ok1, ok2, { from: 'plugins/links/jar', to: 'plugins/jar' }]);
  assert.deepEqual(r, { done: ['plugins/x.jar', 'plugins/y.jar', 'plugins/links/jar'], failed: [] });
  assert.equal(fs.readlinkSync(w.p('plugins/jar')), '../x.jar');
  // As deep as it was, a folder's link leads where it did: moved.
  assert.deepEqual(await move(w, [{ from: 'plugins/links', to: 'archive/links' }]), { done: ['plugins/links'], failed: [] });
  assert.equal(fs.readlinkSync(w.p('archive/links/secret-sym')), '../../config/paper-global.yml');
});

test('move-many: a tree too deep to look through for links is too_large, and nothing moves', async () => {
  const w = filled();
  const deep = `plugins/a/${Array.from({ length: 513 }, () => 'd').join('/')}`;
  fs.mkdirSync(w.p(deep), { recursive: true });
  const before = snapshot(w.root);
  const r = await move(w, [
    { from: 'plugins/x.jar', to: 'archive/x.jar' },
    { from: 'plugins/a', to: 'a' },
  ]);
  assert.equal(r.code, 'too_large', JSON.stringify(r));
  assert.equal(r.entry, 'plugins/a');
  assert.match(r.error!, /^the links in plugins\/a could not be checked: it holds folders more than 512 levels deep; nothing was moved$/);
  assert.deepEqual(snapshot(w.root), before);
  // Renamed in place it is not looked through at all: no link in it can lead further out.
  assert.deepEqual(await move(w, [{ from: 'plugins/a', to: 'plugins/a2' }]), { done: ['plugins/a'], failed: [] });
});
