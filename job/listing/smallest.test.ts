import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Smallest } from './smallest.ts';

/** A small deterministic generator (no Math.random: a failure must repeat). */
function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0);
}

test('keeps exactly the n smallest of any stream, and answers them in order', () => {
  const next = lcg(42);
  for (const cap of [1, 2, 3, 7, 64, 1000]) {
    for (const count of [0, 1, cap - 1, cap, cap + 1, 5000]) {
      if (count < 0) continue;
      const all = Array.from({ length: count }, () => next() % 997);
      const s = new Smallest<number>(cap, (a, b) => a - b);
      for (const x of all) s.offer(x);
      assert.ok(s.size <= cap);
      assert.equal(s.full, count >= cap, 'full once it holds its capacity');
      assert.deepEqual(s.drainSorted(), [...all].sort((a, b) => a - b).slice(0, cap), `cap ${cap}, ${count} items`);
      assert.equal(s.size, 0);
    }
  }
});

test('never holds more than its capacity, and the top is the largest kept', () => {
  const s = new Smallest<number>(3, (a, b) => a - b);
  for (const x of [9, 8, 7, 6, 5, 4, 3, 2, 1]) {
    s.offer(x);
    assert.ok(s.size <= 3);
  }
  assert.equal(s.peekMax(), 3);
  assert.equal(s.wouldKeep(3), false, 'an equal item is not kept: the first seen stays');
  assert.equal(s.wouldKeep(2), true);
  assert.equal(s.offer(10), false);
  assert.deepEqual(s.drainSorted(), [1, 2, 3]);
});

test('orders by the comparator given: raw bytes with Buffer.compare', () => {
  const s = new Smallest<Buffer>(2, Buffer.compare);
  for (const n of ['é', 'z', 'Z', 'a']) s.offer(Buffer.from(n));
  assert.deepEqual(
    s.drainSorted().map((b) => b.toString()),
    ['Z', 'a'],
  );
});

test('a capacity below 1 or not whole is refused', () => {
  for (const cap of [0, -1, 1.5, Number.NaN]) assert.throws(() => new Smallest<number>(cap, (a, b) => a - b), RangeError);
});
