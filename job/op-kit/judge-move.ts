/**
 * What a move, of one entry (rename) or of many (move-many), checks of its source, its target
 * folder, its new name and the links it carries: shared here so neither op's folder imports the
 * other's.
 *
 * @module
 */
import fs from 'node:fs';
import { newPathRefusal } from '../../lib/protocol/names.ts';
import type { Result } from '../../lib/protocol/result.ts';
import { depthOf, judgeMovedLinks, type LinkBudget, realFolder } from '../runtime/moved-links.ts';
import type { OpContext } from '../runtime/types.ts';
import { holdsEntry, withheldEntry } from '../runtime/withheld.ts';
import { fail, failure, msg } from '../volume/failure.ts';
import { isGuarded, managedMessage, renameGuardIdentities } from '../volume/guard.ts';
import { dir } from '../volume/pathutil.ts';
import { identityOf, isNotExist, type Parent } from '../volume/root.ts';

export const ROOT_MESSAGE = "the server's root folder cannot be moved";

/** What a move checks of its source once opened: that it exists and is not guarded. Its lstat, or the refusal. */
export function judgeMoveSource(ctx: OpContext, from: string, src: Parent & { name: string }): { st: fs.BigIntStats } | Result {
  let st: fs.BigIntStats;
  try {
    st = fs.lstatSync(src.at(), { bigint: true });
  } catch (e) {
    return failure(from, e, 'lstat');
  }
  if (isGuarded(identityOf(st), renameGuardIdentities(ctx.root))) return fail('bad_path', managedMessage(from));
  // A folder holding the withheld file, however deep (`config` may lead elsewhere): moving it
  // would take the file away from its name.
  if (st.isDirectory() && holdsEntry(withheldEntry(ctx.root), identityOf(st))) return fail('bad_path', managedMessage(from));
  return { st };
}

export const missingFolder = (to: string): Result => fail('not_found', msg.folderMissing(dir(to)));

/**
 * The folder a move lands in, opened (the new name not followed), or the refusal: a new name the
 * name rule refuses (lib/protocol/names.ts) among them. `to` is cleaned.
 */
export function openMoveTarget(ctx: OpContext, to: string): (Parent & { name: string }) | Result {
  const badName = newPathRefusal(to);
  if (badName) return fail('bad_path', badName);
  let dst: Parent;
  try {
    dst = ctx.root.parentOf(to, 'lstat');
  } catch (e) {
    // A missing destination parent is only known for sure when the rename fails; it is the same answer.
    return isNotExist(e) ? missingFolder(to) : failure(to, e, 'lstat');
  }
  if (dst.name === null) {
    dst.close();
    return fail('bad_path', ROOT_MESSAGE);
  }
  return dst as Parent & { name: string };
}

/** Null when nothing is at the move's new name (it never replaces), else the refusal. */
export function judgeTargetFree(to: string, dst: Parent & { name: string }): Result | null {
  try {
    fs.lstatSync(dst.at());
    return fail('exists', msg.exists(to));
  } catch (e) {
    if (!isNotExist(e)) return failure(to, e, 'lstat');
  }
  return null;
}

/**
 * Null when moving the entry `src` to `dst` takes no link it is or holds further out, else the
 * refusal (`from` and `to` as the caller spelled them name the link in it).
 */
export function judgeMoveLinks(ctx: OpContext, from: string, src: Parent & { name: string }, to: string, dst: Parent & { name: string }, budget: LinkBudget): Result | null {
  const into = realFolder(ctx.root, dst.fd);
  return judgeMovedLinks(
    {
      dirFd: src.fd,
      name: src.name,
      fromDepth: depthOf(realFolder(ctx.root, src.fd)),
      lands: into === '' ? dst.name : `${into}/${dst.name}`,
      shown: from,
      shownAfter: to,
      unchanged: 'nothing was moved',
    },
    budget,
  );
}
