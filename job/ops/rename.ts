/**
 * rename(path, to): moves a file, a folder (with its contents) or a link (itself). Never replaces,
 * never creates parents, never moves a guarded file (the forwarding secret, `config`, server.properties),
 * never takes a relative link further above the world's root than it reaches now (moved-links.ts).
 *
 * @module
 */
import fs from 'node:fs';
import { newPathRefusal } from '../../lib/protocol/names.ts';
import type { Result } from '../../lib/protocol/result.ts';
import { depthOf, judgeMovedLinks, LinkBudget, realFolder } from '../runtime/moved-links.ts';
import { freeLandingRefused } from '../runtime/redacted-values.ts';
import type { OpContext, OpRequestOf } from '../runtime/types.ts';
import { holdsEntry, withheldEntry } from '../runtime/withheld.ts';
import { sweepStale } from '../runtime/working-files.ts';
import { isOpened, openEntry } from '../volume/entry.ts';
import { bestEffort, fail, failure, msg } from '../volume/failure.ts';
import { isGuarded, managedMessage, renameGuardIdentities } from '../volume/guard.ts';
import { clean, dir } from '../volume/pathutil.ts';
import { errCode, identityOf, isNotExist, Parent } from '../volume/root.ts';

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

export function rename(ctx: OpContext, req: OpRequestOf<'rename'>): Result {
  const from = clean(req.path);
  const to = clean(req.to ?? '');
  if (from === '.' || to === '.') return fail('bad_path', ROOT_MESSAGE);

  const opened = openEntry(ctx.root, from, ROOT_MESSAGE);
  if (!isOpened(opened)) return opened;
  const src = opened.parent;
  try {
    const judged = judgeMoveSource(ctx, from, src);
    if (!('st' in judged)) return judged;
    const dst = openMoveTarget(ctx, to);
    if (!(dst instanceof Parent)) return dst;
    try {
      for (const fd of new Set([src.fd, dst.fd])) sweepStale(fd);
      const taken = judgeTargetFree(to, dst);
      if (taken) return taken;
      const links = judgeMoveLinks(ctx, from, src, to, dst, new LinkBudget());
      if (links) return links;
      // A file moved to where the root server.properties would be must hold no redacted placeholder.
      const placeholder = freeLandingRefused(ctx.root, dst.fd, dst.name, to, src.at());
      if (placeholder) return placeholder;
      try {
        fs.renameSync(src.at(), dst.at());
      } catch (e) {
        if (errCode(e) === 'ENOENT') return missingFolder(to);
        return failure(from, e, 'renameat');
      }
      for (const fd of new Set([src.fd, dst.fd])) {
        bestEffort(() => ctx.fsync(fd)); // the move is done either way
      }
      return {};
    } finally {
      dst.close();
    }
  } finally {
    src.close();
  }
}
