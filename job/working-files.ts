/**
 * The editor's working files: a write lands its content in `.felis-edit-<12 hex>` beside the target
 * and renames it over the target. A Job killed between the two leaves that file behind. Such names
 * are the editor's, not the world's:
 * - listings leave them out, and no op addresses one (a read or delete finds nothing there; a
 *   write, mkdir or rename cannot create one);
 * - a mutation removes the stale ones in each folder it works in. Stale = older than the Job's
 *   deadline: a Job that wrote it is dead by then, and the world lock keeps two mutations from
 *   running at once, so no live write can own it.
 *
 * @module
 */
import fs from 'node:fs';
import type { Result } from '../lib/protocol/result.ts';
import { bestEffort, fail, msg } from './failure.ts';
import { clean } from './pathutil.ts';
import { atPath, fdPath } from './root.ts';
import type { OpRequest } from './types.ts';

export const TEMP_PREFIX = '.felis-edit-';
// `.felis-edit-withheld` is the withheld-file ledger's folder (withheld.ts): hidden the same way,
// and no upload session's name (those are 12 hex digits).
const WORKING_NAME = /^\.felis-edit-(?:[0-9a-f]{12}|withheld)$/;

/** A working file older than this is left over by a dead Job: the Job deadline (120 s). */
export const STALE_AFTER_MS = 120_000;
/** Entries looked at per sweep: a huge folder costs a bounded amount. */
const MAX_SWEEP_ENTRIES = 10_000;

export function isWorkingName(name: string | Buffer): boolean {
  return WORKING_NAME.test(typeof name === 'string' ? name : name.toString('latin1'));
}

/** True when any component of the path is a working name. */
export function pathHasWorkingName(path: string): boolean {
  return clean(path).split('/').some((c) => isWorkingName(c));
}

/**
 * The answer for a request that names a working file, or null. Where the name is only looked up it
 * is not there (`not_found`); where it would be created it is refused (`bad_path`).
 */
export function refuseWorkingName(req: OpRequest): Result | null {
  const creates = req.op === 'write' || req.op === 'mkdir';
  if (pathHasWorkingName(req.path)) {
    return creates ? fail('bad_path', reservedMessage(req.path)) : fail('not_found', msg.notExist(req.path === '' ? '.' : req.path));
  }
  if (req.op === 'rename' && req.to !== undefined && pathHasWorkingName(req.to)) return fail('bad_path', reservedMessage(req.to));
  return null;
}

function reservedMessage(p: string): string {
  return `${p}: names starting with ${TEMP_PREFIX} are the editor's working files`;
}

/**
 * Removes the stale working files directly in the folder `dirFd` (regular files only, never a
 * link's target). Best effort: a failure leaves the file for the next sweep. Returns how many went.
 */
export function sweepStale(dirFd: number, nowMs: number = Date.now()): number {
  let removed = 0;
  bestEffort(() => {
    const dir = fs.opendirSync(fdPath(dirFd), { encoding: 'buffer' as BufferEncoding });
    try {
      for (let i = 0; i < MAX_SWEEP_ENTRIES; i++) {
        const d = dir.readSync() as unknown as fs.Dirent<Buffer> | null;
        if (d === null) break;
        if (!isWorkingName(d.name)) continue;
        bestEffort(() => {
          const st = fs.lstatSync(atPath(dirFd, d.name));
          if (!st.isFile() || nowMs - st.mtimeMs < STALE_AFTER_MS) return;
          fs.unlinkSync(atPath(dirFd, d.name));
          removed++;
        });
      }
    } finally {
      dir.closeSync();
    }
  });
  return removed;
}
