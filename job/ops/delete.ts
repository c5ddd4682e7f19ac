/**
 * delete(path): removes a file, a link (never its target) or a folder with everything in it
 * (never the root). The recursion works on directory fds and never follows a link.
 *
 * @module
 */
import fs from 'node:fs';
import type { Result } from '../../lib/protocol/result.ts';
import type { OpContext, OpRequestOf } from '../runtime/types.ts';
import { holdsEntry, isEntry, linkedEntry, linkedMessage } from '../runtime/withheld.ts';
import { sweepStale } from '../runtime/working-files.ts';
import { crossesVolume, entryPath } from '../trash/paths.ts';
import { startIntake } from '../trash/store.ts';
import { isOpened, openEntry } from '../volume/entry.ts';
import { bestEffort, fail, failure } from '../volume/failure.ts';
import { removeAllAt } from '../volume/remove-all.ts';
import { identityOf, type Parent } from '../volume/root.ts';

export const ROOT_DELETE = "the server's root folder cannot be deleted";

/**
 * What a delete checks of its entry once opened: that it exists, and that it is not the withheld
 * file (or a folder holding it) while other links to it exist. Its lstat, or the refusal.
 */
export function judgeDelete(ctx: OpContext, name: string, parent: Parent & { name: string }): { st: fs.BigIntStats } | Result {
  let st: fs.BigIntStats;
  try {
    st = fs.lstatSync(parent.at(), { bigint: true });
  } catch (e) {
    return failure(name, e, 'lstat');
  }
  // The withheld file (or a folder holding it) stays while other links to it exist: deleting it
  // would leave its content at them under ordinary names. The other links can go.
  const linked = linkedEntry(ctx.root);
  if (linked && (isEntry(linked, parent.fd, parent.name) || (st.isDirectory() && holdsEntry(linked, identityOf(st))))) {
    return fail('withheld_linked', linkedMessage(name));
  }
  return { st };
}

function removeForGood(ctx: OpContext, name: string, parent: Parent & { name: string }): Result {
  try {
    removeAllAt(parent.fd, parent.name);
  } catch (e) {
    return failure(name, e, 'unlinkat');
  }
  bestEffort(() => ctx.fsync(parent.fd)); // the entry is gone either way
  return {};
}

export function deleteOp(ctx: OpContext, req: OpRequestOf<'delete'>): Result {
  const opened = openEntry(ctx.root, req.path, ROOT_DELETE);
  if (!isOpened(opened)) return opened;
  const { name, parent } = opened;
  try {
    sweepStale(parent.fd);
    const judged = judgeDelete(ctx, name, parent);
    if (!('st' in judged)) return judged;
    // Into the trash when it is on: one rename, so the entry is where it was or kept, whatever stops the Job.
    const intake = startIntake(ctx, 'delete', false, [{ path: entryPath(ctx, parent), st: judged.st }]);
    if (intake) {
      try {
        intake.move(0, parent.at());
      } catch (e) {
        intake.seal();
        if (!crossesVolume(e)) return failure(name, e, 'renameat');
        // A folder on another volume (a mount inside the world) cannot be moved: it goes for good.
        return removeForGood(ctx, name, parent);
      }
      bestEffort(() => ctx.fsync(parent.fd));
      const trashId = intake.seal();
      return trashId ? { trash_id: trashId } : {};
    }
    return removeForGood(ctx, name, parent);
  } finally {
    parent.close();
  }
}
