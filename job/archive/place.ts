/**
 * Placement: the extracted tree in `<work>/new/` is moved into the destination by renames, all or
 * nothing across any stop. The walk first writes down every move in the op's journal
 * (job/journal/journal.ts) without making any: a name missing on the server moves in whole (a new
 * folder is one rename, whatever it holds), a folder that exists on both sides is descended into,
 * a replaced file is first moved aside to `<work>/old/<n>` and the new one moved in. Then the
 * journal is sealed and the moves made; a failure undoes them, newest first, and a stop at any
 * point is finished or undone by the next Job that mounts the world read-write.
 *
 * Every path is relative to the destination folder's fd; the walk only descends into folders it
 * has just seen to be real folders (never links), and the world is held by this Job alone.
 *
 * @module
 */
import fs from 'node:fs';
import type { Journal } from '../journal/journal.ts';
import { atPath, isNotExist } from '../volume/root.ts';

export class PlacementError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'PlacementError';
  }
}

/**
 * Writes down the moves that place `<work>/new/*` into the destination `destFd` (`work` is the
 * working folder's name there) in `journal`, which is still staging. Returns how many.
 */
export function planPlacement(destFd: number, work: string, journal: Journal): number {
  const at = (rel: string) => atPath(destFd, rel);
  let moves = 0;
  let oldSeq = 0;
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
          journal.add(['in', `${work}/new/${r}`, r]);
          moves++;
        } else if (st.isDirectory() && ent.isDirectory()) {
          walk(r);
        } else if (st.isFile() && ent.isFile()) {
          journal.add(['aside', r, `${work}/old/${oldSeq++}`]);
          journal.add(['in', `${work}/new/${r}`, r]);
          moves += 2;
        } else {
          // The target check refused every other pairing; the world is held, so this is a bug.
          throw new PlacementError(`${r} changed type on the server during the extraction`);
        }
      }
    } finally {
      d.closeSync();
    }
  };
  walk('');
  return moves;
}

/**
 * Plans and makes the placement. On failure every move is undone and the original error rethrown
 * (an UndoError when some move could not be undone: the journal then stays for the next Job).
 */
export function place(destFd: number, work: string, journal: Journal): number {
  const n = planPlacement(destFd, work, journal);
  journal.place();
  return n;
}
