/**
 * The `n` smallest of a stream of items, in bounded memory: a max-heap of at most `n` items whose
 * top is the largest kept, so each new item costs one comparison when it is not among the
 * smallest and O(log n) when it is. A paged listing keeps a page (plus one, to know there is
 * more) of a folder of any size this way, instead of all its names.
 *
 * @module
 */

export class Smallest<T> {
  readonly #cap: number;
  readonly #cmp: (a: T, b: T) => number;
  /** A binary max-heap by `cmp`: `#items[0]` is the largest kept. */
  readonly #items: T[] = [];

  /** Keeps at most `cap` items (at least 1), ordered by `cmp` (negative: `a` before `b`). */
  constructor(cap: number, cmp: (a: T, b: T) => number) {
    if (!Number.isInteger(cap) || cap < 1) throw new RangeError(`cap must be a whole number of at least 1, not ${cap}`);
    this.#cap = cap;
    this.#cmp = cmp;
  }

  get size(): number {
    return this.#items.length;
  }

  /** It holds `cap` items: a newcomer is kept only when it is smaller than the largest of them. */
  get full(): boolean {
    return this.#items.length >= this.#cap;
  }

  /** The largest item kept, or undefined when none is. */
  peekMax(): T | undefined {
    return this.#items[0];
  }

  /** Would `item` be kept (it is smaller than the largest kept, or there is room)? */
  wouldKeep(item: T): boolean {
    return this.#items.length < this.#cap || this.#cmp(item, this.#items[0]!) < 0;
  }

  /** Offers an item; it is kept when it is among the `cap` smallest so far. Answers whether it was. */
  offer(item: T): boolean {
    const h = this.#items;
    if (h.length < this.#cap) {
      h.push(item);
      this.#up(h.length - 1);
      return true;
    }
    if (this.#cmp(item, h[0]!) >= 0) return false;
    h[0] = item;
    this.#down(0);
    return true;
  }

  /** The items kept, smallest first; the heap is left empty. */
  drainSorted(): T[] {
    const out = this.#items.splice(0);
    return out.sort(this.#cmp);
  }

  #up(i: number): void {
    const h = this.#items;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (this.#cmp(h[i]!, h[p]!) <= 0) return;
      [h[i], h[p]] = [h[p]!, h[i]!];
      i = p;
    }
  }

  #down(i: number): void {
    const h = this.#items;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && this.#cmp(h[l]!, h[m]!) > 0) m = l;
      if (r < h.length && this.#cmp(h[r]!, h[m]!) > 0) m = r;
      if (m === i) return;
      [h[i], h[m]] = [h[m]!, h[i]!];
      i = m;
    }
  }
}
