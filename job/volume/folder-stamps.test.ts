import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { makeWorld } from '../testing/world.ts';
import { FolderStamps, RACY_MS } from './folder-stamps.ts';
import { WorldRoot } from './root.ts';

/** Later than every time the test's folders have: nothing of them is racy. */
const LATER = () => Date.now() + 10 * RACY_MS;
/** Past the kernel's coarse clock tick, so a change after a stamp carries a later time. */
const tick = () => new Promise((r) => setTimeout(r, 30));

/** Stamps every folder under `rel` (itself first) in walk order, as the usage walk does. */
function stampTree(root: string, rel: string, since = LATER(), cap?: number): FolderStamps {
  const s = new FolderStamps(since, cap);
  // By bytes, as the walk goes: a name is kept as latin1 text, one character per byte.
  const visit = (abs: Buffer, parent: number, name: string) => {
    const i = s.add(parent, name, fs.lstatSync(abs));
    for (const e of fs.readdirSync(abs, { withFileTypes: true, encoding: 'buffer' })) {
      if (e.isDirectory()) visit(Buffer.concat([abs, Buffer.from('/'), e.name]), i, e.name.toString('latin1'));
    }
  };
  visit(Buffer.from(path.join(root, rel)), -1, '');
  return s;
}

function world() {
  const w = makeWorld();
  for (const d of ['world/region', 'world/data', 'logs']) fs.mkdirSync(w.p(d), { recursive: true });
  fs.writeFileSync(w.p('world/region/r.0.0.mca'), 'R');
  const root = WorldRoot.open(w.root);
  return { w, root };
}

test('unchanged while nothing changes; a file added deep below, or removed, or a folder renamed, is a change', async () => {
  const { w, root } = world();
  let s = stampTree(w.root, '');
  assert.equal(s.size, 6); // the root, config, world, region, data, logs
  assert.equal(s.unchanged(root, '.'), true);
  await tick();
  fs.writeFileSync(w.p('world/region/r.0.1.mca'), 'new');
  assert.equal(s.unchanged(root, '.'), false, 'a file added two levels down');
  s = stampTree(w.root, '');
  await tick();
  fs.unlinkSync(w.p('world/region/r.0.1.mca'));
  assert.equal(s.unchanged(root, '.'), false, 'a file removed');
  s = stampTree(w.root, '');
  await tick();
  fs.renameSync(w.p('world/data'), w.p('world/data2'));
  assert.equal(s.unchanged(root, '.'), false, 'a folder renamed');
  root.close();
});

test('a file growing in place changes no folder: the stamps hold (the caller bounds how long it trusts them)', async () => {
  const { w, root } = world();
  const s = stampTree(w.root, 'world');
  await tick();
  fs.appendFileSync(w.p('world/region/r.0.0.mca'), Buffer.alloc(8192, 1));
  assert.equal(s.unchanged(root, 'world'), true);
  root.close();
});

test('a folder swapped for a link to a copy of it (same names) is a change, and nothing outside is looked at', async () => {
  const { w, root } = world();
  const s = stampTree(w.root, '');
  fs.cpSync(w.p('world'), path.join(w.outside, 'world'), { recursive: true });
  await tick();
  fs.renameSync(w.p('world'), w.p('world-old'));
  fs.symlinkSync(path.join(w.outside, 'world'), w.p('world'));
  assert.equal(s.unchanged(root, '.'), false);
  root.close();
});

test('racy: a folder changed less than RACY_MS before the walk began spoils the stamps; so does a full set, and so do none', () => {
  const { w, root } = world();
  const racy = stampTree(w.root, '', Date.now());
  assert.equal(racy.full, true);
  assert.equal(racy.unchanged(root, '.'), false);
  const full = stampTree(w.root, '', LATER(), 3);
  assert.equal(full.full, true);
  assert.equal(full.size, 3);
  assert.equal(full.unchanged(root, '.'), false);
  assert.equal(new FolderStamps(LATER()).unchanged(root, '.'), false, 'nothing stamped is nothing known');
  const spoiled = stampTree(w.root, '');
  spoiled.spoil();
  assert.equal(spoiled.unchanged(root, '.'), false);
  root.close();
});

test('a name that is not UTF-8 is found again by its bytes; a path gone is a change', async () => {
  const { w, root } = world();
  const odd = Buffer.concat([Buffer.from(w.p('world/')), Buffer.from([0xff, 0x41])]);
  fs.mkdirSync(odd);
  fs.mkdirSync(Buffer.concat([odd, Buffer.from('/below')]));
  const s = stampTree(w.root, 'world');
  assert.equal(s.unchanged(root, 'world'), true);
  fs.rmSync(w.p('world'), { recursive: true });
  assert.equal(s.unchanged(root, 'world'), false);
  root.close();
});
