/**
 * Placement: the extracted tree in `<work>/new/` is moved into the destination by renames, every
 * one journaled so that any failure undoes them all, in reverse order, leaving the tree exactly as
 * it was. Existing folders are merged into (descended), a replaced file is first moved aside to
 * `<work>/old/<n>`, anything else (a new file or a whole new subtree) moves in one rename.
 *
 * The journal holds at most JOURNAL_CHUNK moves in memory; older ones are spilled to numbered
 * segment files in the working folder and read back, newest first, only for a rollback.
 * Every path is relative to the destination folder's fd; the walk only descends into folders it
 * has just seen to be real folders (never links), and the world is held by this Job alone.
 *
 * @module
 */
import fs from 'node:fs';
import { atPath, fdPath, isNotExist } from '../root.ts';

/** Moves held in memory at most, and characters of their paths at most, before a segment is spilled. */
const JOURNAL_CHUNK = 8192;
const JOURNAL_CHARS = 1 << 20;

export interface PlaceHooks {
  /** Renames `from` to `to` (paths under /proc/self/fd). Tests inject failures here. */
  rename: (from: string, to: string) => void;
  fsync: (fd: number) => void;
}

type Move = [from: string, to: string];

class Journal {
  readonly #dir: string;
  #mem: Move[] = [];
  #memChars = 0;
  #segments = 0;
  count = 0;
  constructor(dir: string) {
    this.#dir = dir;
  }
  add(m: Move): void {
    this.#mem.push(m);
    this.#memChars += m[0].length + m[1].length;
    this.count++;
    if (this.#mem.length >= JOURNAL_CHUNK || this.#memChars >= JOURNAL_CHARS) {
      fs.writeFileSync(`${this.#dir}/journal-${this.#segments++}`, JSON.stringify(this.#mem), { mode: 0o600 });
      this.#mem = [];
      this.#memChars = 0;
    }
  }
  /** Every move, newest first. */
  *newestFirst(): Generator<Move> {
    for (let i = this.#mem.length - 1; i >= 0; i--) yield this.#mem[i];
    for (let s = this.#segments - 1; s >= 0; s--) {
      const seg = JSON.parse(fs.readFileSync(`${this.#dir}/journal-${s}`, 'utf8')) as Move[];
      for (let i = seg.length - 1; i >= 0; i--) yield seg[i];
    }
  }
}

export class PlacementError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'PlacementError';
  }
}

/**
 * Moves `<work>/new/*` into the destination. `work` is the working folder's name in the
 * destination. Returns the number of renames. On failure everything is rolled back and the
 * original error is rethrown (a PlacementError when the rollback itself failed too).
 */
export function place(destFd: number, work: string, hooks: PlaceHooks): number {
  const at = (rel: string) => atPath(destFd, rel);
  const journal = new Journal(at(work));
  let oldSeq = 0;
  const move = (from: string, to: string) => {
    hooks.rename(at(from), at(to));
    journal.add([from, to]);
  };
  const touched: string[] = [];
  const walk = (rel: string) => {
    const src = rel === '' ? `${work}/new` : `${work}/new/${rel}`;
    const d = fs.opendirSync(at(src));
    try {
      for (let ent = d.readSync(); ent; ent = d.readSync()) {
        const r = rel === '' ? ent.name : `${rel}/${ent.name}`;
        let st: fs.Stats | null = null;
        try {
          st = fs.lstatSync(at(r));
        } catch (e) {
          if (!isNotExist(e)) throw e;
        }
        if (!st) {
          move(`${work}/new/${r}`, r);
        } else if (st.isDirectory() && ent.isDirectory()) {
          walk(r);
        } else if (st.isFile() && ent.isFile()) {
          const aside = `${work}/old/${oldSeq++}`;
          move(r, aside);
          move(`${work}/new/${r}`, r);
        } else {
          // The target check refused every other pairing; the world is held, so this is a bug.
          throw new PlacementError(`${r} changed type on the server during the extraction`);
        }
      }
    } finally {
      d.closeSync();
    }
    touched.push(rel === '' ? '.' : rel);
  };
  try {
    walk('');
  } catch (e) {
    const failed: string[] = [];
    for (const [from, to] of journal.newestFirst()) {
      try {
        hooks.rename(at(to), at(from));
      } catch (undo) {
        failed.push(`${to} → ${from}: ${(undo as Error).message}`);
      }
    }
    if (failed.length > 0) {
      throw new PlacementError(`placement failed (${(e as Error).message}) and ${failed.length} moves could not be undone: ${failed.slice(0, 5).join('; ')}`, { cause: e });
    }
    throw e;
  }
  // The renames are done; make the folders that received them durable (best effort: the moves
  // have happened either way, and a failed fsync cannot undo them).
  for (const rel of touched) {
    try {
      const fd = fs.openSync(rel === '.' ? fdPath(destFd) : at(rel), fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
      try {
        hooks.fsync(fd);
      } finally {
        fs.closeSync(fd);
      }
    } catch {
      // Deliberately ignored: see above.
    }
  }
  return journal.count;
}
