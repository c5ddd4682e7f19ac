import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DecisionCache } from './cache.ts';

test('a decision expires after its TTL, not before', () => {
  let now = 1000;
  const c = new DecisionCache<string>(10, () => now);
  c.set('k', 'yes', 500);
  now += 499;
  assert.equal(c.get('k'), 'yes');
  now += 1;
  assert.equal(c.get('k'), undefined);
  assert.equal(c.size, 0);
});

test('the cache never holds more than its size; the least recently used goes first', () => {
  const c = new DecisionCache<number>(3, () => 0);
  c.set('a', 1, 1000);
  c.set('b', 2, 1000);
  c.set('c', 3, 1000);
  assert.equal(c.get('a'), 1); // a is now the most recent
  c.set('d', 4, 1000);
  assert.equal(c.size, 3);
  assert.equal(c.get('b'), undefined);
  assert.deepEqual([c.get('a'), c.get('c'), c.get('d')], [1, 3, 4]);
});

test('a TTL of zero stores nothing (caching off), and a size below one is refused', () => {
  const c = new DecisionCache<number>(3, () => 0);
  c.set('a', 1, 0);
  assert.equal(c.get('a'), undefined);
  assert.throws(() => new DecisionCache(0), /at least one entry/);
});
