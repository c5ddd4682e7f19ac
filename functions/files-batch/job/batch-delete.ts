/**
 * delete-many: the single delete's checks for every path first (delete.ts `judgeDelete`: exists,
 * not the root, not the linked withheld file), then the whole batch at once through the placement
 * journal (batch-journal.ts): every item moved aside into a working folder, all or nothing across
 * any stop, then into the undo trash as one record (or removed, without a trash). So a stop at any
 * point leaves, once the next read-write Job has recovered the world, every item there or every
 * item gone.
 *
 * What the journal cannot move aside is removed item by item after it, each in one atomic step as
 * before the journal (a file or link unlinked, a folder moved into trash beside it in one rename,
 * then removed: batch-trash.ts): an item on another volume mounted inside the world, or every
 * item when the journal cannot be written (a full volume, where a delete must still free room).
 *
 * The same entry twice is refused (`batch_conflict`): two answers for one item would be a lie.
 * A path inside a folder the batch also deletes is allowed and reported done: a caller that
 * selected a folder and some of what is in it asked for them all to be gone, and they are.
 *
 * @module
 */
import fs from 'node:fs';
import { judgeDelete, ROOT_DELETE } from '../../../job/op-kit/judge-delete.ts';
import type { OpContext, OpRequestOf } from '../../../job/runtime/types.ts';
import { refuseWorkingPath } from '../../../job/runtime/working-files.ts';
import { crossesVolume, entryPath } from '../../../job/trash/paths.ts';
import { type Intake, startIntake } from '../../../job/trash/store.ts';
import { makeTrash } from '../../../job/volume/batch-trash.ts';
import { isOpened, openEntry } from '../../../job/volume/entry.ts';
import { bestEffort } from '../../../job/volume/failure.ts';
import { removeAllAt } from '../../../job/volume/remove-all.ts';
import { atPath, type Identity, identityOf, isNotExist } from '../../../job/volume/root.ts';
import type { BatchFailure, Result } from '../../../lib/protocol/result.ts';
import { changedSince, conflict, diskFailure, idKey, outcome, placeOf, refusal, sameEntry, sweeper } from './batch-common.ts';
import { applyJournaled } from './batch-journal.ts';

interface Item {
  path: string;
  /** Root-relative, its folder without links: what the trash records. */
  canonical: string;
  st: fs.BigIntStats;
  id: Identity;
  isDir: boolean;
  /** Inside a folder the batch deletes too. */
  covered: boolean;
}

/** Every path checked; the items, or the refusal of the first bad one. */
export function checkDeletes(ctx: OpContext, paths: string[]): Item[] | Result {
  const items: Item[] = [];
  const above: string[][] = [];
  const seen = new Set<string>();
  for (const path of paths) {
    const hidden = refuseWorkingPath(path, false);
    if (hidden) return refusal(path, hidden);
    const opened = openEntry(ctx.root, path, ROOT_DELETE);
    if (!isOpened(opened)) return refusal(path, opened);
    try {
      const judged = judgeDelete(ctx, opened.name, opened.parent);
      if (!('st' in judged)) return refusal(path, judged);
      const place = placeOf(ctx.root, opened.parent);
      if (seen.has(place.key)) return conflict(path, `${path} is named twice in the batch`);
      seen.add(place.key);
      items.push({ path, canonical: entryPath(ctx, opened.parent), st: judged.st, id: identityOf(judged.st), isDir: judged.st.isDirectory(), covered: false });
      above.push(place.above);
    } finally {
      opened.parent.close();
    }
  }
  const folders = new Set(items.filter((i) => i.isDir).map((i) => idKey(i.id)));
  for (const [i, item] of items.entries()) item.covered = above[i]!.some((k) => folders.has(k));
  return items;
}

/**
 * Removes one checked item in one atomic step: into the undo trash as its slot `k` when the trash
 * is on, else a file unlinked and a folder moved aside and removed. Null when done.
 */
function removeOne(ctx: OpContext, item: Item, k: number, intake: Intake | null): BatchFailure | null {
  const opened = openEntry(ctx.root, item.path, ROOT_DELETE);
  if (!isOpened(opened)) {
    // Gone with a folder deleted before it: what was asked.
    if (item.covered && opened.code === 'not_found') return null;
    return changedSince(item.path);
  }
  const { parent } = opened;
  try {
    let st: fs.BigIntStats;
    try {
      st = fs.lstatSync(parent.at(), { bigint: true });
    } catch (e) {
      if (isNotExist(e) && item.covered) return null;
      return diskFailure(item.path, e, 'lstat');
    }
    if (!sameEntry(st, item.id)) return changedSince(item.path);
    if (intake) {
      try {
        intake.move(k, parent.at());
        bestEffort(() => ctx.fsync(parent.fd));
        return null;
      } catch (e) {
        // A folder on another volume (a mount inside the world) cannot be moved: it goes for good.
        if (!crossesVolume(e)) return diskFailure(item.path, e, 'renameat');
      }
    }
    if (!st.isDirectory()) {
      try {
        fs.unlinkSync(parent.at());
      } catch (e) {
        return diskFailure(item.path, e, 'unlinkat');
      }
    } else {
      let trash: string;
      try {
        trash = makeTrash(parent.fd, ctx.randomBytes);
      } catch (e) {
        return diskFailure(item.path, e, 'mkdirat');
      }
      try {
        ctx.rename(parent.at(), `${atPath(parent.fd, trash)}/${parent.name}`);
      } catch (e) {
        bestEffort(() => fs.rmdirSync(atPath(parent.fd, trash)));
        return diskFailure(item.path, e, 'renameat');
      }
      ctx.journalStep?.(`batch:moved-to-trash:${item.path}`);
      // The item is gone already; what stays of the trash is removed by the next sweep here.
      bestEffort(() => removeAllAt(parent.fd, trash));
    }
    bestEffort(() => ctx.fsync(parent.fd)); // the entry is gone either way
    return null;
  } finally {
    parent.close();
  }
}

export function deleteMany(ctx: OpContext, req: OpRequestOf<'delete-many'>): Result {
  const paths = req.batch && 'paths' in req.batch ? req.batch.paths : [];
  const checked = checkDeletes(ctx, paths);
  if (!Array.isArray(checked)) return checked;
  sweepFolders(ctx, paths);
  // Inside a folder the batch deletes, an item goes with it; on another volume than the root's (the
  // working folder's), it cannot be moved aside.
  const rootDev = fs.fstatSync(ctx.root.fd, { bigint: true }).dev;
  const journaled = checked.filter((i) => !i.covered && i.st.dev === rootDev);
  const applied =
    journaled.length === 0
      ? {}
      : applyJournaled(
          ctx,
          'delete-many',
          journaled.map((i) => ({ item: i.path, from: i.canonical })),
          journaled.map((i) => ({ path: i.canonical, st: i.st })),
        );
  if (applied === null) return deleteEach(ctx, checked);
  if ('refusal' in applied) return applied.refusal;
  const gone = new Set(journaled);
  const done: string[] = [];
  const failed: BatchFailure[] = [];
  for (const item of checked) {
    // The rest, item by item: what was inside a deleted folder is found gone with it.
    const f = gone.has(item) ? null : removeOne(ctx, item, 0, null);
    if (f) failed.push(f);
    else done.push(item.path);
  }
  const r = outcome(done, failed);
  return applied.trashId ? { ...r, trash_id: applied.trashId } : r;
}

/** Each checked item removed in one atomic step of its own, into one trash record: the batch without its journal. */
function deleteEach(ctx: OpContext, checked: Item[]): Result {
  const done: string[] = [];
  const failed: BatchFailure[] = [];
  // One record for the whole batch: one restore puts back all it removed.
  const intake = startIntake(
    ctx,
    'delete-many',
    false,
    checked.map((i) => ({ path: i.canonical, st: i.st })),
  );
  let trashId: string | undefined;
  try {
    checked.forEach((item, k) => {
      const f = removeOne(ctx, item, k, intake);
      if (f) failed.push(f);
      else done.push(item.path);
      ctx.journalStep?.(`batch:item:${done.length + failed.length}`);
    });
  } finally {
    trashId = intake?.seal();
  }
  const r = outcome(done, failed);
  return trashId ? { ...r, trash_id: trashId } : r;
}

/** The stale working files of each folder the batch works in, as the single delete sweeps its own. */
function sweepFolders(ctx: OpContext, paths: string[]): void {
  const sweep = sweeper();
  for (const path of paths) {
    const opened = openEntry(ctx.root, path, ROOT_DELETE);
    if (!isOpened(opened)) continue;
    try {
      sweep(opened.parent.fd);
    } finally {
      opened.parent.close();
    }
  }
}

export const runs = { 'delete-many': deleteMany };
