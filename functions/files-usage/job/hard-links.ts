/**
 * The files with more than one name a disk-usage walk has met, so their bytes count once: by
 * (device, inode), remembered only for files whose link count is above one (most files have
 * one name and cost nothing here).
 *
 * A file counts where it is first met, except that the world wins over the trash: a file met in
 * the undo trash or a working folder and then under a world name (the trash keeps hard links to
 * what an op replaced) moves from the trash's bytes to the world's, so the two figures never hold
 * the same blocks twice, whichever the walk meets first.
 *
 * Bounded: at most HARD_LINKS_REMEMBERED files (a few MiB). Past that, a file not already
 * remembered counts at each name again: a tree with that many linked files is over-counted
 * rather than let the walk's memory grow with the tree.
 *
 * @module
 */

export const HARD_LINKS_REMEMBERED = 1 << 16;

/** Where a name was met: under the world's names, or in what the ops keep (trash, working names). */
export type Side = 'world' | 'trash';

/** What the walk does with the bytes of a name: count them, skip them (counted already), or move them from the trash's to the world's. */
export type Verdict = 'count' | 'skip' | 'move';

export class HardLinks {
  readonly cap: number;
  /** dev → ino → true while the file counts under the trash. An inode past 2^53 is keyed by its decimal text. */
  readonly #seen = new Map<number, Map<number | string, boolean>>();
  #size = 0;

  constructor(cap = HARD_LINKS_REMEMBERED) {
    this.cap = cap;
  }

  get size(): number {
    return this.#size;
  }

  meet(dev: number, ino: number | string, side: Side): Verdict {
    let inDev = this.#seen.get(dev);
    const inTrash = inDev?.get(ino);
    if (inTrash === undefined) {
      if (this.#size < this.cap) {
        if (!inDev) this.#seen.set(dev, (inDev = new Map()));
        inDev.set(ino, side === 'trash');
        this.#size++;
      }
      return 'count';
    }
    if (inTrash && side === 'world') {
      inDev!.set(ino, false);
      return 'move';
    }
    return 'skip';
  }
}
