/**
 * What the many-file ops (batch-delete.ts, batch-move.ts, batch-chmod.ts) share. Each checks every
 * item before it changes anything, with the single op's own checks, and answers the first bad one
 * with its code and its path (the Result's `entry`); only then does it apply the items (a delete or
 * a move all at once through the placement journal, batch-journal.ts; a chmod one by one, each in
 * one atomic step), and answer `{done, failed}` (failed: what the disk refused then).
 *
 * Items are told apart by entry, not by spelling: an entry is the folder holding it (by identity)
 * and its name there, so `a/x` and `link-to-a/x` are one item twice.
 *
 * @module
 */
import fs from 'node:fs';
import { foldersAbove } from '../../../job/runtime/withheld-entry.ts';
import { sweepStale } from '../../../job/runtime/working-files.ts';
import { fail, writeFailure } from '../../../job/volume/failure.ts';
import { type Identity, identityOf, type Parent, type WorldRoot } from '../../../job/volume/root.ts';
import type { BatchFailure, Result } from '../../../lib/protocol/result.ts';

/** The refusal of a batch: the item's Result, with the path it is about in `entry`. */
export function refusal(path: string, r: Result): Result {
  return { code: r.code, error: r.error, entry: path };
}

export function conflict(path: string, message: string): Result {
  return refusal(path, fail('batch_conflict', message));
}

export const idKey = (id: Identity): string => `${id.dev}:${id.ino}`;

/** Where an entry is: its folder's identity and its name there. */
export interface Place {
  dir: Identity;
  name: string;
  key: string;
  /** The folder holding it and every folder above it up to the root (the root excluded), as keys. */
  above: string[];
}

export function placeOf(root: WorldRoot, parent: Parent & { name: string }): Place {
  const dir = identityOf(fs.fstatSync(parent.fd, { bigint: true }));
  return { dir, name: parent.name, key: `${idKey(dir)}/${parent.name}`, above: foldersAbove(root, parent.fd).map(idKey) };
}

/** Is the entry at this place still the one the check saw? The world is held, so only our own items change it. */
export function sameEntry(st: fs.BigIntStats, id: Identity): boolean {
  return st.dev === id.dev && st.ino === id.ino;
}

/** A failure after the check, as the result lists it: its result code (the functions map it as any other) and message. */
export function failedItem(path: string, r: Result): BatchFailure {
  return { path, error: { code: r.code ?? 'bad_path', message: r.error ?? '' } };
}

/** The disk's refusal of an item once checked (space, I/O), as a failed item. */
export function diskFailure(path: string, e: unknown, op: string): BatchFailure {
  return failedItem(path, writeFailure(path, e, op));
}

export function changedSince(path: string): BatchFailure {
  return failedItem(path, fail('conflict', `${path} changed after the batch was checked; left as it was`));
}

/**
 * Sweeps each folder it is given once (by identity) of the stale working files a dead Job left,
 * as the single ops sweep the folders they work in (working-files.ts `sweepStale`).
 */
export function sweeper(): (dirFd: number) => void {
  const swept = new Set<string>();
  return (dirFd) => {
    const key = idKey(identityOf(fs.fstatSync(dirFd, { bigint: true })));
    if (!swept.has(key)) sweepStale(dirFd);
    swept.add(key);
  };
}

/** The answer of an applied batch. */
export function outcome(done: string[], failed: BatchFailure[]): Result {
  return { done, failed };
}
