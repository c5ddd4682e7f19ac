/**
 * FolderStamps: the folders a walk met, each with what its inode says of it (inode number, mtime,
 * ctime), in the order the walk met them, so that a later look can tell whether any folder's entry
 * set may have changed without reading a single file.
 *
 * Why it is enough for the entry set: adding, removing or renaming a name in a folder sets that
 * folder's mtime and ctime (a new sub-folder, a new hard link, a file replaced by rename, all of
 * them); a folder swapped for another has another inode. What it cannot see: a file that grows or
 * shrinks in place (write, truncate) changes only the file's own inode, never its folder's; a
 * caller that trusts the stamps must bound how long it does (job/runtime/warm-results.ts).
 *
 * Racy stamps (as git's racily clean index entries): a folder's times come from the kernel's coarse
 * clock, one tick (a few ms) behind, so a name added within the tick of the stamp could leave the
 * same times. A folder whose ctime is less than RACY_MS before the walk began (or after) is not
 * trusted: the stamps are spoiled and the caller keeps nothing. Any change after a stamp that is
 * older than that carries a later time.
 *
 * `unchanged` holds to the world root's containment as the walk does: it starts at the walk's
 * path opened by the root (WorldRoot.openDir), opens each folder below its parent's fd with
 * O_DIRECTORY|O_NOFOLLOW and lstats a leaf folder below its parent's fd, so a folder swapped for a
 * link is a mismatch (a link's inode), never followed out. It opens only folders with folders
 * below them; the rest cost one lstat.
 *
 * Bounded: at most `cap` folders (FOLDER_STAMPS_MAX by default, about 7 MiB of arrays and names with 18-character names, measured);
 * past it `full` is set and nothing more is kept: the caller keeps nothing (a rescan next time).
 *
 * @module
 */
import fs from 'node:fs';
import { atPath, type WorldRoot } from './root.ts';

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW } = fs.constants;
const DIR_FLAGS = O_RDONLY | O_DIRECTORY | O_NOFOLLOW;
const ASCII = /^[\x00-\x7f]*$/;
const LSTAT = { throwIfNoEntry: false } as const;

/** The most folders one set of stamps holds: a tree with more is walked again each time. */
export const FOLDER_STAMPS_MAX = 65_536;
/** A folder changed less than this before the walk began may change again with the same times. */
export const RACY_MS = 1_000;

/** What a folder's inode says of it, as fs.Stats spells it. */
export type FolderStat = Pick<fs.Stats, 'ino' | 'mtimeMs' | 'ctimeMs' | 'isDirectory'>;

export class FolderStamps {
  readonly cap: number;
  /** When the walk began (wall clock, ms): a folder changed since RACY_MS before it spoils the stamps. */
  readonly since: number;
  /** Index of the parent (-1 for the walk's own folder, always the first). */
  readonly #parent: number[] = [];
  /** The name below the parent, as the walk read it (latin1: one character per byte). */
  readonly #name: string[] = [];
  readonly #ino: number[] = [];
  readonly #mtime: number[] = [];
  readonly #ctime: number[] = [];
  #full = false;

  constructor(since: number, cap = FOLDER_STAMPS_MAX) {
    this.since = since;
    this.cap = cap;
  }

  get size(): number {
    return this.#parent.length;
  }

  /** More folders were met than `cap`, or one was racy, or the walk could not stamp one: the stamps say nothing of the tree. */
  get full(): boolean {
    return this.#full;
  }

  /** The walk met a folder it could not stamp: nothing recorded may be trusted. */
  spoil(): void {
    this.#full = true;
  }

  /**
   * Records a folder (the walk's own first, with parent -1), from the stat taken before it was
   * read; answers its index for its own folders' `parent`, or -1 once full.
   */
  add(parent: number, latin1Name: string, st: FolderStat): number {
    if (this.#full || (parent < 0 && this.size > 0) || parent >= this.size) return -1;
    if (this.size >= this.cap || st.ctimeMs > this.since - RACY_MS) {
      this.#full = true;
      return -1;
    }
    this.#parent.push(parent);
    this.#name.push(latin1Name);
    this.#ino.push(st.ino);
    this.#mtime.push(st.mtimeMs);
    this.#ctime.push(st.ctimeMs);
    return this.size - 1;
  }

  #same(i: number, st: FolderStat | undefined): boolean {
    return st?.isDirectory() === true && st.ino === this.#ino[i] && st.mtimeMs === this.#mtime[i] && st.ctimeMs === this.#ctime[i];
  }

  /**
   * Is every folder recorded still there, the same inode with the same mtime and ctime? `path` is
   * the walk's path, as the root opens it. False for anything else: a folder changed, gone,
   * swapped, not openable, or stamps that are full or empty.
   */
  unchanged(root: WorldRoot, path: string): boolean {
    if (this.#full || this.size === 0) return false;
    let base: number;
    try {
      base = root.openDir(path);
    } catch {
      return false;
    }
    /** The folders open on the way down: index and fd, the walk's own at the bottom. */
    const open: { i: number; fd: number }[] = [{ i: 0, fd: base }];
    try {
      if (!this.#same(0, fs.fstatSync(base))) return false;
      for (let i = 1; i < this.size; i++) {
        const p = this.#parent[i];
        while (open.length > 0 && open[open.length - 1].i !== p) fs.closeSync(open.pop()!.fd);
        if (open.length === 0) return false; // not in walk order: never trusted
        const n = this.#name[i];
        const at = atPath(open[open.length - 1].fd, ASCII.test(n) ? n : Buffer.from(n, 'latin1'));
        const hasFolders = i + 1 < this.size && this.#parent[i + 1] === i;
        if (!hasFolders) {
          if (!this.#same(i, fs.lstatSync(at, LSTAT))) return false;
          continue;
        }
        const fd = fs.openSync(at, DIR_FLAGS);
        open.push({ i, fd });
        if (!this.#same(i, fs.fstatSync(fd))) return false;
      }
      return true;
    } catch {
      return false; // gone, swapped for a link (ELOOP, ENOTDIR), not readable any more
    } finally {
      for (const o of open) fs.closeSync(o.fd);
    }
  }
}
