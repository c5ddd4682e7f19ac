import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TopHeap } from './top-heap.ts';

const byValue = (a: number, b: number) => a > b;

test('keeps the cap largest of any stream, best first, against a sort of the whole stream', () => {
  let seed = 11;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % 1000);
  for (const cap of [1, 2, 3, 7, 50]) {
    for (const n of [0, 1, cap - 1, cap, cap + 1, 500]) {
      const xs = Array.from({ length: Math.max(0, n) }, rnd);
      const h = new TopHeap(cap, byValue);
      for (const x of xs) h.push(x);
      assert.deepEqual(h.sorted(), [...xs].sort((a, b) => b - a).slice(0, cap), `cap ${cap}, ${n} items`);
    }
  }
});

test('the bar is the worst kept once full; an item that does not beat it is not kept', () => {
  const h = new TopHeap(2, byValue);
  assert.equal(h.bar, undefined);
  assert.equal(h.push(5), true);
  assert.equal(h.bar, undefined, 'not full yet: anything is kept');
  h.push(9);
  assert.equal(h.bar, 5);
  assert.equal(h.push(5), false, 'a tie does not displace what is kept');
  assert.equal(h.push(3), false);
  assert.equal(h.push(7), true);
  assert.deepEqual(h.sorted(), [9, 7]);
  assert.equal(h.size, 2);
});

test('ties broken by the caller: the order is the one `better` says', () => {
  type N = { n: string; b: number };
  const h = new TopHeap<N>(3, (x, y) => x.b > y.b || (x.b === y.b && x.n < y.n));
  for (const n of ['d', 'b', 'a', 'c', 'e']) h.push({ n, b: 1 });
  assert.deepEqual(
    h.sorted().map((x) => x.n),
    ['a', 'b', 'c'],
  );
});
