/**
 * A bounded map of decisions with an expiry each: at most `size` entries, the least recently used
 * dropped first (a Map keeps insertion order; a hit re-inserts). The clock is injected so tests can
 * move time.
 * @module
 */
export class DecisionCache<V> {
  readonly #entries = new Map<string, { value: V; expires: number }>();
  readonly #size: number;
  readonly #now: () => number;

  constructor(size: number, now: () => number = Date.now) {
    if (!(size >= 1)) throw new Error('a decision cache needs room for at least one entry');
    this.#size = size;
    this.#now = now;
  }

  get(key: string): V | undefined {
    const e = this.#entries.get(key);
    if (!e) return undefined;
    this.#entries.delete(key);
    if (e.expires <= this.#now()) return undefined;
    this.#entries.set(key, e);
    return e.value;
  }

  set(key: string, value: V, ttlMs: number): void {
    this.#entries.delete(key);
    if (ttlMs <= 0) return;
    this.#entries.set(key, { value, expires: this.#now() + ttlMs });
    while (this.#entries.size > this.#size) this.#entries.delete(this.#entries.keys().next().value!);
  }

  get size(): number {
    return this.#entries.size;
  }
}
