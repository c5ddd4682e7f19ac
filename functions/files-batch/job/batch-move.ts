/**
 * move-many: the single rename's checks for every move first (rename.ts: the source exists and is
 * not guarded, the new name's folder exists, nothing is at the new name: never replaces, no link
 * it carries is taken further above the root, moved-links.ts, within one time budget for the
 * whole batch), then the whole batch at once through the placement journal (batch-journal.ts),
 * one rename a move: a stop at any point leaves, once the next read-write Job has recovered the
 * world, every item at its old name or every item at its new one. When the journal cannot be
 * written (a full volume) the moves are made one by one, each in one rename, as before the journal.
 *
 * Refused among the moves (`batch_conflict`), because their outcome would depend on their order:
 * one source moved twice, two moves onto one name, a source inside a folder another move takes
 * away, a new name inside a folder another move takes away. A folder moved into itself is
 * `bad_path`, as the kernel would refuse it. The refusal's path is the source's, or the new
 * name's when the destination is what is wrong.
 *
 * @module
 */
import fs from 'node:fs';
import { judgeMoveLinks, judgeMoveSource, judgeTargetFree, missingFolder, openMoveTarget, ROOT_MESSAGE } from '../../../job/op-kit/judge-move.ts';
import { LinkBudget } from '../../../job/runtime/moved-links.ts';
import { freeLandingRefused } from '../../../job/runtime/redacted-values.ts';
import type { OpContext, OpRequestOf } from '../../../job/runtime/types.ts';
import { refuseWorkingPath, sweepStale } from '../../../job/runtime/working-files.ts';
import { entryPath } from '../../../job/trash/paths.ts';
import { isOpened, type OpenedEntry, openEntry } from '../../../job/volume/entry.ts';
import { bestEffort, fail } from '../../../job/volume/failure.ts';
import { clean } from '../../../job/volume/pathutil.ts';
import { type Identity, identityOf, isNotExist, Parent } from '../../../job/volume/root.ts';
import type { Move } from '../../../lib/protocol/batch-env.ts';
import type { BatchFailure, Result } from '../../../lib/protocol/result.ts';
import { changedSince, conflict, diskFailure, failedItem, idKey, outcome, placeOf, refusal, sameEntry, sweeper } from './batch-common.ts';
import { applyJournaled } from './batch-journal.ts';

interface Item {
  from: string;
  to: string;
  id: Identity;
  /** Root-relative, as the kernel names them: what the journal writes down. */
  canonicalFrom: string;
  canonicalTo: string;
}

interface Seen {
  from: string;
  to: string;
  isDir: boolean;
  srcAbove: string[];
  dstAbove: string[];
}

/** Every move checked; the items, or the refusal of the first bad one. */
export function checkMoves(ctx: OpContext, moves: Move[]): Item[] | Result {
  const items: Item[] = [];
  const sources = new Set<string>();
  const targets = new Set<string>();
  /** The folders moved so far, by identity: what lies inside them moves with them. */
  const movedFolders = new Map<string, string>();
  /** Every folder holding an earlier source or new name, with that item's path. */
  const holding = new Map<string, string>();
  const budget = new LinkBudget();
  for (const m of moves) {
    const refused = refuseWorkingPath(m.from, false) ?? null;
    if (refused) return refusal(m.from, refused);
    const badTo = refuseWorkingPath(m.to, true);
    if (badTo) return refusal(m.to, badTo);
    if (clean(m.to) === '.') return refusal(m.to, fail('bad_path', ROOT_MESSAGE));
    const opened = openEntry(ctx.root, m.from, ROOT_MESSAGE);
    if (!isOpened(opened)) return refusal(m.from, opened);
    try {
      const r = checkOne(ctx, m, opened, { sources, targets, movedFolders, holding, budget });
      if (!('id' in r)) return r;
      items.push(r);
    } finally {
      opened.parent.close();
    }
  }
  return items;
}

function checkOne(
  ctx: OpContext,
  m: Move,
  opened: OpenedEntry,
  s: { sources: Set<string>; targets: Set<string>; movedFolders: Map<string, string>; holding: Map<string, string>; budget: LinkBudget },
): Item | Result {
  const src = opened.parent;
  const judged = judgeMoveSource(ctx, opened.name, src);
  if (!('st' in judged)) return refusal(m.from, judged);
  const to = clean(m.to);
  const dst = openMoveTarget(ctx, to);
  if (!(dst instanceof Parent)) return refusal(m.to, dst);
  try {
    const taken = judgeTargetFree(to, dst);
    if (taken) return refusal(m.to, taken);
    const id = identityOf(judged.st);
    const isDir = judged.st.isDirectory();
    const from = placeOf(ctx.root, src);
    const into = placeOf(ctx.root, dst);
    const seen: Seen = { from: m.from, to: m.to, isDir, srcAbove: from.above, dstAbove: into.above };
    if (isDir && seen.dstAbove.includes(idKey(id))) return refusal(m.to, fail('bad_path', `${m.from} cannot be moved into itself`));
    if (s.sources.has(from.key)) return conflict(m.from, `${m.from} is moved twice in the batch`);
    if (s.targets.has(into.key)) return conflict(m.to, `two moves of the batch go to ${m.to}`);
    const srcIn = seen.srcAbove.find((k) => s.movedFolders.has(k));
    if (srcIn) return conflict(m.from, `${m.from} is inside ${s.movedFolders.get(srcIn)}, which the batch also moves`);
    const dstIn = seen.dstAbove.find((k) => s.movedFolders.has(k));
    if (dstIn) return conflict(m.to, `${m.to} is inside ${s.movedFolders.get(dstIn)}, which the batch also moves`);
    if (isDir && s.holding.has(idKey(id))) return conflict(m.from, `${m.from} holds ${s.holding.get(idKey(id))}, which the batch also moves`);
    // Last: the only check that may walk a tree. The moves are independent by now, so each is judged from where it is.
    const links = judgeMoveLinks(ctx, opened.name, src, to, dst, s.budget);
    if (links) return refusal(m.from, links);
    // A file moved to where the root server.properties would be must hold no redacted placeholder.
    const placeholder = freeLandingRefused(ctx.root, dst.fd, dst.name, to, src.at());
    if (placeholder) return refusal(m.to, placeholder);
    s.sources.add(from.key);
    s.targets.add(into.key);
    if (isDir) s.movedFolders.set(idKey(id), m.from);
    for (const k of seen.srcAbove) if (!s.holding.has(k)) s.holding.set(k, m.from);
    for (const k of seen.dstAbove) if (!s.holding.has(k)) s.holding.set(k, m.to);
    return { from: m.from, to: m.to, id, canonicalFrom: entryPath(ctx, src), canonicalTo: entryPath(ctx, dst) };
  } finally {
    dst.close();
  }
}

/** Makes one checked move in one rename; null when done. */
function moveOne(ctx: OpContext, item: Item): BatchFailure | null {
  const opened = openEntry(ctx.root, item.from, ROOT_MESSAGE);
  if (!isOpened(opened)) return changedSince(item.from);
  const src = opened.parent;
  try {
    let st: fs.BigIntStats;
    try {
      st = fs.lstatSync(src.at(), { bigint: true });
    } catch (e) {
      return isNotExist(e) ? changedSince(item.from) : diskFailure(item.from, e, 'lstat');
    }
    if (!sameEntry(st, item.id)) return changedSince(item.from);
    const to = clean(item.to);
    const dst = openMoveTarget(ctx, to);
    if (!(dst instanceof Parent)) return changedSince(item.from);
    try {
      for (const fd of new Set([src.fd, dst.fd])) sweepStale(fd);
      if (judgeTargetFree(to, dst)) return changedSince(item.from);
      try {
        ctx.rename(src.at(), dst.at());
      } catch (e) {
        if (isNotExist(e)) return failedItem(item.from, missingFolder(to));
        return diskFailure(item.from, e, 'renameat');
      }
      for (const fd of new Set([src.fd, dst.fd])) bestEffort(() => ctx.fsync(fd)); // the move is done either way
      return null;
    } finally {
      dst.close();
    }
  } finally {
    src.close();
  }
}

export function moveMany(ctx: OpContext, req: OpRequestOf<'move-many'>): Result {
  const moves = req.batch && 'moves' in req.batch ? req.batch.moves : [];
  const checked = checkMoves(ctx, moves);
  if (!Array.isArray(checked)) return checked;
  sweepFolders(ctx, checked);
  const applied = applyJournaled(
    ctx,
    'move-many',
    checked.map((i) => ({ item: i.from, from: i.canonicalFrom, to: i.canonicalTo })),
  );
  if (applied === null) return moveEach(ctx, checked);
  if ('refusal' in applied) return applied.refusal;
  return outcome(
    checked.map((i) => i.from),
    [],
  );
}

/** The stale working files of every folder a move leaves or enters, as the single rename sweeps its own. */
function sweepFolders(ctx: OpContext, checked: Item[]): void {
  const sweep = sweeper();
  for (const item of checked) {
    const opened = openEntry(ctx.root, item.from, ROOT_MESSAGE);
    if (isOpened(opened)) {
      try {
        sweep(opened.parent.fd);
      } finally {
        opened.parent.close();
      }
    }
    const dst = openMoveTarget(ctx, clean(item.to));
    if (dst instanceof Parent) {
      try {
        sweep(dst.fd);
      } finally {
        dst.close();
      }
    }
  }
}

/** Each checked move made in one rename of its own: the batch without its journal. */
function moveEach(ctx: OpContext, checked: Item[]): Result {
  const done: string[] = [];
  const failed: BatchFailure[] = [];
  for (const item of checked) {
    const f = moveOne(ctx, item);
    if (f) failed.push(f);
    else done.push(item.from);
    ctx.journalStep?.(`batch:item:${done.length + failed.length}`);
  }
  return outcome(done, failed);
}

export const runs = { 'move-many': moveMany };
