/**
 * WarmResults: what a browse Pod keeps of a costly read between requests (the disk usage walk's
 * figures), each with the stamps of the folders it walked (job/volume/folder-stamps.ts). An answer
 * is given again only while every folder's stamp is unchanged (so no name was added, removed or
 * renamed anywhere below) and it is younger than `maxAgeMs`: a file growing in place (a region
 * file the game writes, a log) changes no folder's stamp, and a per-file look would cost what a
 * new walk costs, so its change is seen at the latest `maxAgeMs` later.
 *
 * Bounded: at most `kept` answers (the least recently used goes first), and at most `stampsCap`
 * folder stamps over all of them: an answer whose stamps would pass it pushes older ones out, and
 * one whose walk met more folders is not kept at all (FolderStamps.full), nor one whose walk met a
 * folder changed just before it began (FolderStamps, racy stamps). One-shot Jobs keep none.
 *
 * @module
 */
import { FOLDER_STAMPS_MAX, FolderStamps } from '../volume/folder-stamps.ts';
import type { WorldRoot } from '../volume/root.ts';

/** Answers kept, and how long one is trusted without a new walk. */
export const WARM_RESULTS_KEPT = 8;
export const WARM_MAX_AGE_MS = 10_000;

export interface WarmResultsOptions {
  kept?: number;
  maxAgeMs?: number;
  /** The most folder stamps over every kept answer. Default FOLDER_STAMPS_MAX. */
  stampsCap?: number;
  /** Monotonic milliseconds (tests pass a fake). */
  now?: () => number;
}

interface Kept {
  value: object;
  stamps: FolderStamps;
  /** When the walk started: the age counts from before anything was read. */
  at: number;
}

export class WarmResults {
  readonly kept: number;
  readonly maxAgeMs: number;
  readonly stampsCap: number;
  readonly now: () => number;
  /** In use order, the least recent first (a Map keeps insertion order). */
  readonly #entries = new Map<string, Kept>();
  #stamps = 0;

  constructor(o: WarmResultsOptions = {}) {
    this.kept = o.kept ?? WARM_RESULTS_KEPT;
    this.maxAgeMs = o.maxAgeMs ?? WARM_MAX_AGE_MS;
    this.stampsCap = o.stampsCap ?? FOLDER_STAMPS_MAX;
    this.now = o.now ?? (() => performance.now());
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The stamps a walk that begins at `since` (wall clock, ms) records into: at most what the whole cache may hold. */
  stamps(since: number): FolderStamps {
    return new FolderStamps(since, this.stampsCap);
  }

  /**
   * The answer kept under `key`, when it is still the tree's: younger than `maxAgeMs` and every
   * folder below `path` unchanged (looked at with `root`). A stale one is dropped.
   */
  get(key: string, root: WorldRoot, path: string): object | undefined {
    const e = this.#entries.get(key);
    if (!e) return undefined;
    this.#drop(key, e);
    if (this.now() - e.at > this.maxAgeMs || !e.stamps.unchanged(root, path)) return undefined;
    this.#entries.set(key, e); // most recently used now
    this.#stamps += e.stamps.size;
    return e.value;
  }

  /** Keeps `value` (whose walk started at `at`, by `now`) with its folders' stamps; a full set of stamps keeps nothing. */
  put(key: string, value: object, stamps: FolderStamps, at: number): void {
    const old = this.#entries.get(key);
    if (old) this.#drop(key, old);
    if (stamps.full || stamps.size === 0 || stamps.size > this.stampsCap) return;
    for (const [k, e] of this.#entries) {
      if (this.#entries.size < this.kept && this.#stamps + stamps.size <= this.stampsCap) break;
      this.#drop(k, e);
    }
    this.#entries.set(key, { value, stamps, at });
    this.#stamps += stamps.size;
  }

  #drop(key: string, e: Kept): void {
    this.#entries.delete(key);
    this.#stamps -= e.stamps.size;
  }
}
