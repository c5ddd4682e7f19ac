/**
 * A replace that keeps what it replaces: the new content, staged under a working name beside its
 * target, is renamed over the target as before (one atomic step: a reader sees the old bytes or
 * the new), and the old file is first hard-linked into the undo trash, so it is kept without a
 * copy. Where a link cannot be made (a filesystem without them, a link limit) the old file is
 * renamed into the trash instead and the new one into its place right after; recovery puts it
 * back when a stop comes between the two (job/trash/recover.ts).
 * @module
 */
import fs from 'node:fs';
import type { OpContext } from '../runtime/types.ts';
import { isNotExist, type Parent } from '../volume/root.ts';
import { entryPath } from './paths.ts';
import { startIntake } from './store.ts';

/**
 * Renames `tmp` (a /proc path of the staged file) over the entry `parent` names, keeping a regular
 * file that was there in the trash. Returns the record's id, or undefined when nothing was kept.
 * Throws what the final rename throws, with the old file where it was.
 */
export function replaceKeeping(ctx: OpContext, op: string, parent: Parent, tmp: string): string | undefined {
  const target = parent.at();
  const name = parent.name;
  let st: fs.BigIntStats | null = null;
  try {
    st = fs.lstatSync(target, { bigint: true });
  } catch (e) {
    if (!isNotExist(e)) throw e;
  }
  const intake = st?.isFile() && name !== null ? startIntake(ctx, op, true, [{ path: entryPath(ctx, { fd: parent.fd, name }), st }]) : null;
  if (!intake) {
    fs.renameSync(tmp, target);
    return undefined;
  }
  let linked = false;
  try {
    intake.link(0, target);
    linked = true;
  } catch {
    try {
      intake.move(0, target);
    } catch {
      // Neither: the replace goes ahead without keeping the old file, as without a trash.
    }
  }
  try {
    fs.renameSync(tmp, target);
  } catch (e) {
    if (linked) intake.unlink(0);
    else intake.putBack(0, target);
    intake.seal();
    throw e;
  }
  ctx.journalStep?.('trash:replaced');
  return intake.seal();
}
