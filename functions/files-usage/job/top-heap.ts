/**
 * The `cap` best items of a stream, in memory of `cap` whatever the stream's length: a min-heap
 * whose root is the worst item kept, so a newcomer is judged against one item and, when it is
 * better, replaces it in log(cap) steps. The disk-usage walk keeps its largest files and each
 * folder's largest children in these.
 *
 * @module
 */

export class TopHeap<T> {
  readonly cap: number;
  /** `better(a, b)`: a ranks before b (a strict order: ties broken by the caller). */
  readonly #better: (a: T, b: T) => boolean;
  readonly #items: T[] = [];

  constructor(cap: number, better: (a: T, b: T) => boolean) {
    this.cap = Math.max(0, Math.floor(cap));
    this.#better = better;
  }

  get size(): number {
    return this.#items.length;
  }

  /** The worst item kept once the heap is full (what a newcomer must beat), else undefined: anything is kept. */
  get bar(): T | undefined {
    return this.#items.length < this.cap ? undefined : this.#items[0];
  }

  /** Keeps `x` when it is among the `cap` best seen so far; true when it was kept. */
  push(x: T): boolean {
    const h = this.#items;
    if (h.length < this.cap) {
      h.push(x);
      this.#up(h.length - 1);
      return true;
    }
    if (h.length === 0 || !this.#better(x, h[0])) return false;
    h[0] = x;
    this.#down(0);
    return true;
  }

  /** The items kept, best first. */
  sorted(): T[] {
    return [...this.#items].sort((a, b) => (this.#better(a, b) ? -1 : this.#better(b, a) ? 1 : 0));
  }

  /** Moves item i towards the root while it is worse than its parent (the root is the worst). */
  #up(i: number): void {
    const h = this.#items;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.#better(h[p], h[i])) break;
      [h[p], h[i]] = [h[i], h[p]];
      i = p;
    }
  }

  #down(i: number): void {
    const h = this.#items;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let worst = i;
      if (l < h.length && this.#better(h[worst], h[l])) worst = l;
      if (r < h.length && this.#better(h[worst], h[r])) worst = r;
      if (worst === i) return;
      [h[worst], h[i]] = [h[i], h[worst]];
      i = worst;
    }
  }
}
