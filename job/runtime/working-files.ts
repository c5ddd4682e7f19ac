/**
 * Working names: what the ops keep on the world volume while they work, which is not the world's.
 * Exactly these names (a prefix and exactly 12 lowercase hex digits, nothing else) are reserved:
 * - `.felis-edit-<12 hex>`: the editor's working files (a write or upload lands its content there
 *   beside the target and renames it over the target; a zip is written there), and an upload
 *   session's or a pull's staging folder at the world root (functions/files-pull/job/pull-staging.ts);
 * - `.felis-unzip-<12 hex>`: an extraction's working folder in its destination folder, a placement
 *   journal's folder at the root, or a many-file delete's working folder at the root.
 *
 * `isWorkingName` is the one predicate every op uses:
 * - listings leave them out, and no op addresses one, by name or through a link (the world root's
 *   walk finds nothing there, so a read, delete, rename, zip, download or list answers
 *   `not_found`; a write, mkdir or rename cannot create one: `bad_path`), zip never packs one and
 *   an archive may not hold one;
 * - a mutation removes the stale ones in each folder it works in: editor files older than the
 *   Job's deadline (a Job that wrote it is dead by then, and the world lock keeps two mutations
 *   from running at once, so no live write can own it), and extraction folders of ours (see
 *   work-folder.ts); abandoned upload sessions go after every mutation (upload/session.ts), and
 *   a pull's staging once no placement can start for it (functions/files-pull/job/pull-staging.ts). A pull downloads
 *   holding no world, beside these sweeps: its staging is a folder holding `pull.json`, which the
 *   stale-file sweep (regular files only) and the session sweep (folders holding `state.json`)
 *   pass by.
 *   A user's folder or file that happens to have a reserved name is hidden, but only what is
 *   verifiably ours is ever removed.
 *
 * @module
 */
import fs from 'node:fs';
import type { Result } from '../../lib/protocol/result.ts';
import { EDIT_PREFIX, isEditName, isWorkingName as isWorkingText } from '../../lib/protocol/working-names.ts';
import { removeStaleTrash } from '../volume/batch-trash.ts';
import { bestEffort, fail, msg } from '../volume/failure.ts';
import { clean } from '../volume/pathutil.ts';
import { atPath, fdPath } from '../volume/root.ts';
import { removeStaleWorkFolders, WORK_PREFIX } from '../volume/work-folder.ts';
import type { OpRequest } from './types.ts';

export const TEMP_PREFIX = EDIT_PREFIX;

/** A working file older than this is left over by a dead Job: the Job deadline (120 s). */
export const STALE_AFTER_MS = 120_000;
/** Entries looked at per sweep: a huge folder costs a bounded amount. */
const MAX_SWEEP_ENTRIES = 10_000;

/** Any working name: the editor's, an upload's staging folder, an extraction's working folder, the withheld ledger's folder. */
export function isWorkingName(name: string | Buffer): boolean {
  const n = typeof name === 'string' ? name : name.toString('latin1');
  return isWorkingText(n);
}

/** True when any component of the path is a working name. */
export function pathHasWorkingName(path: string): boolean {
  return clean(path)
    .split('/')
    .some((c) => isWorkingName(c));
}

/**
 * The answer for a request that names a working file, or null. Where the name is only looked up it
 * is not there (`not_found`); where it would be created it is refused (`bad_path`).
 */
export function refuseWorkingName(req: OpRequest): Result | null {
  const refused = refuseWorkingPath(req.path, req.op === 'write' || req.op === 'mkdir');
  if (refused) return refused;
  if (req.op === 'rename' && req.to !== undefined && pathHasWorkingName(req.to)) return fail('bad_path', reservedMessage(req.to));
  return null;
}

/** The same answer for one path: looked up (`creates` false) or created there. Null when it names no working file. */
export function refuseWorkingPath(path: string, creates: boolean): Result | null {
  if (!pathHasWorkingName(path)) return null;
  return creates ? fail('bad_path', reservedMessage(path)) : fail('not_found', msg.notExist(path === '' ? '.' : path));
}

export function reservedMessage(p: string): string {
  return `${p}: names starting with ${TEMP_PREFIX} or ${WORK_PREFIX} are the editor's working files`;
}

/**
 * Removes the stale working files directly in the folder `dirFd` (regular files only, never a
 * link's target), and the working folders a dead extraction or many-file delete left there. Best effort: a failure
 * leaves the file for the next sweep. Returns how many went.
 */
export function sweepStale(dirFd: number, nowMs: number = Date.now()): number {
  let removed = 0;
  bestEffort(() => {
    const dir = fs.opendirSync(fdPath(dirFd), { encoding: 'buffer' as BufferEncoding });
    try {
      for (let i = 0; i < MAX_SWEEP_ENTRIES; i++) {
        const d = dir.readSync() as unknown as fs.Dirent<Buffer> | null;
        if (d === null) break;
        if (!isEditName(d.name.toString('latin1'))) continue;
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
  return removed + removeStaleWorkFolders(dirFd) + removeStaleTrash(dirFd);
}
