/**
 * Loopback addresses for Pods: each running Pod gets its own `127.x.y.z` as `status.podIP`, so
 * two Pods can listen on the same container port without colliding, as they could on a real node.
 * Linux routes all of 127.0.0.0/8 to the loopback interface, so no setup is needed.
 *
 * Each pool starts at a random point of the range: several embedded clusters on one machine (tests
 * run in parallel, each with its own) then hardly ever hand out the same address, which would make
 * one cluster's Pod fail to listen, or a caller reach another cluster's Pod (whose token check
 * refuses it).
 *
 * Never handed out: 127.0.0.1 (the host's own services listen there) and any address whose last
 * octet is 0 or 255. Allocation moves round-robin through the range, so an address freed a moment
 * ago is the last to come back: a caller still holding a stale podIP reaches nobody rather than a
 * new Pod (and a new Pod would refuse it anyway, for want of its token).
 *
 * @module
 */
import { randomInt } from 'node:crypto';

/** 127.1.0.1 … 127.254.255.254: away from 127.0.0.x, which hosts tend to use for themselves. */
const FIRST = (127 << 24) | (1 << 16);
const LAST = ((127 << 24) | (254 << 16) | (255 << 8) | 254) >>> 0;

function usable(n: number): boolean {
  const z = n & 0xff;
  return z !== 0 && z !== 255;
}

export function formatIp(n: number): string {
  return `${(n >>> 24) & 0xff}.${(n >>> 16) & 0xff}.${(n >>> 8) & 0xff}.${n & 0xff}`;
}

export class PodIpPool {
  readonly #inUse = new Map<string, number>();
  readonly #taken = new Set<number>();
  #cursor: number;
  readonly #first: number;
  readonly #last: number;

  /** The range and the starting point are parameters only so a test can exhaust a small range. */
  constructor(range: { first: number; last: number; start?: number } = { first: FIRST, last: LAST }) {
    this.#first = range.first >>> 0;
    this.#last = range.last >>> 0;
    this.#cursor = range.start ?? this.#first + randomInt(this.#last - this.#first + 1);
  }

  /** The address of `owner` (a Pod uid), allocating one on first ask. Throws when the range is full. */
  allocate(owner: string): string {
    const held = this.#inUse.get(owner);
    if (held !== undefined) return formatIp(held);
    const size = this.#last - this.#first + 1;
    for (let i = 0; i < size; i++) {
      const n = this.#cursor;
      this.#cursor = n >= this.#last ? this.#first : n + 1;
      if (!usable(n) || this.#taken.has(n)) continue;
      this.#taken.add(n);
      this.#inUse.set(owner, n);
      return formatIp(n);
    }
    throw new Error('no free pod address left');
  }

  /** The address `owner` holds now, if any. */
  addressOf(owner: string): string | undefined {
    const n = this.#inUse.get(owner);
    return n === undefined ? undefined : formatIp(n);
  }

  /** Gives `owner`'s address back; a second release is a no-op. */
  release(owner: string): void {
    const n = this.#inUse.get(owner);
    if (n === undefined) return;
    this.#inUse.delete(owner);
    this.#taken.delete(n);
  }

  get size(): number {
    return this.#inUse.size;
  }
}

export { FIRST as POD_IP_FIRST, LAST as POD_IP_LAST };
