import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { makeWorld } from '../testing/world.ts';
import { FolderStamps, RACY_MS } from '../volume/folder-stamps.ts';
import { WorldRoot } from '../volume/root.ts';
import { WarmResults } from './warm-results.ts';

const LATER = Date.now() + 10 * RACY_MS;

/** The root and its `config` folder stamped, as a walk of the root would. */
function stamped(root: string): FolderStamps {
  const s = new FolderStamps(LATER);
  const i = s.add(-1, '', fs.lstatSync(root));
  s.add(i, 'config', fs.lstatSync(`${root}/config`));
  return s;
}

test('an answer is given again while its folders hold and it is younger than maxAgeMs; then it is gone', () => {
  const w = makeWorld();
  const root = WorldRoot.open(w.root);
  let t = 0;
  const c = new WarmResults({ maxAgeMs: 10_000, now: () => t });
  const a = { figures: 1 };
  c.put('k', a, stamped(w.root), 0);
  t = 9_999;
  assert.equal(c.get('k', root, '.'), a);
  assert.equal(c.get('other', root, '.'), undefined);
  t = 10_001;
  assert.equal(c.get('k', root, '.'), undefined, 'too old');
  assert.equal(c.size, 0);
  t = 0;
  assert.equal(c.get('k', root, '.'), undefined, 'dropped, not only hidden');
  root.close();
});

test('a folder changed: not given, and dropped', async () => {
  const w = makeWorld();
  const root = WorldRoot.open(w.root);
  const c = new WarmResults({ now: () => 0 });
  c.put('k', { n: 1 }, stamped(w.root), 0);
  await new Promise((r) => setTimeout(r, 30)); // past the coarse clock's tick
  fs.writeFileSync(w.p('config/new.yml'), 'x');
  assert.equal(c.get('k', root, '.'), undefined);
  assert.equal(c.size, 0);
  root.close();
});

test('bounded: at most `kept` answers, least recently used out first; at most stampsCap stamps over all; spoiled stamps keep nothing', () => {
  const w = makeWorld();
  const root = WorldRoot.open(w.root);
  const c = new WarmResults({ kept: 2, stampsCap: 5, now: () => 0 });
  c.put('a', { a: 1 }, stamped(w.root), 0);
  c.put('b', { b: 1 }, stamped(w.root), 0);
  assert.ok(c.get('a', root, '.'), 'a used: b is now the least recent');
  c.put('c', { c: 1 }, stamped(w.root), 0);
  assert.equal(c.size, 2);
  assert.equal(c.get('b', root, '.'), undefined);
  assert.ok(c.get('a', root, '.'));
  assert.ok(c.get('c', root, '.'));
  // 2 + 2 stamps held; three more would pass 5: the oldest goes, then the rest fits.
  const three = stamped(w.root);
  three.add(0, 'config', fs.lstatSync(w.p('config')));
  const big = new WarmResults({ kept: 8, stampsCap: 5, now: () => 0 });
  big.put('a', { a: 1 }, stamped(w.root), 0);
  big.put('b', { b: 1 }, stamped(w.root), 0);
  big.put('c', { c: 1 }, three, 0);
  assert.deepEqual([big.size, big.get('a', root, '.'), !!big.get('b', root, '.'), !!big.get('c', root, '.')], [2, undefined, true, true]);
  const spoiled = stamped(w.root);
  spoiled.spoil();
  big.put('d', { d: 1 }, spoiled, 0);
  assert.equal(big.get('d', root, '.'), undefined);
  big.put('e', { e: 1 }, new FolderStamps(LATER), 0);
  assert.equal(big.get('e', root, '.'), undefined, 'no stamps, nothing kept');
  root.close();
});
