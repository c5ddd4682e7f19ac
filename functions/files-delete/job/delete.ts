/**
 * delete(path): removes a file, a link (never its target) or a folder with everything in it
 * (never the root). The recursion works on directory fds and never follows a link.
 *
 * @module
 */
import { judgeDelete, ROOT_DELETE } from '../../../job/op-kit/judge-delete.ts';
import type { OpContext, OpRequestOf } from '../../../job/runtime/types.ts';
import { sweepStale } from '../../../job/runtime/working-files.ts';
import { crossesVolume, entryPath } from '../../../job/trash/paths.ts';
import { startIntake } from '../../../job/trash/store.ts';
import { isOpened, openEntry } from '../../../job/volume/entry.ts';
import { bestEffort, failure } from '../../../job/volume/failure.ts';
import { removeAllAt } from '../../../job/volume/remove-all.ts';
import type { Parent } from '../../../job/volume/root.ts';
import type { Result } from '../../../lib/protocol/result.ts';

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

export const runs = { delete: deleteOp };
