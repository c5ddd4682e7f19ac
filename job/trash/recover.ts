/**
 * What a Job that mounts a world read-write does with the trash before anything else: every record
 * a stopped Job left unfinished is settled (docs/undo.md), then what has expired is purged.
 *
 * - `moving`: an item is in the trash exactly when its slot exists. Of a replace, a slot whose
 *   entry is still at its path (linked, never replaced) is dropped, and one whose path is free (the
 *   new content never landed) is put back. The record is then held with what stays in it.
 * - `restoring`: when no slot is left the restore was done, and the record goes. Otherwise it is
 *   rolled back: each item already back at its destination (the same entry, by identity) returns
 *   to its slot, the folders the restore made are removed when empty, and the record is held again.
 *
 * @module
 */
import fs from 'node:fs';
import { TRASH_ID } from '../../lib/protocol/trash-env.ts';
import type { OpContext } from '../runtime/types.ts';
import { bestEffort } from '../volume/failure.ts';
import { atPath, identityOf, isNotExist, type Parent } from '../volume/root.ts';
import { readRecord, type TrashRecord, writeRecord } from './record.ts';
import { idText, sealRecord, Trash } from './store.ts';

/** The entry at a root-relative path: its folder (close it) and lstat, or null when it is not there. */
export function entryAt(ctx: OpContext, path: string): { parent: Parent & { name: string }; st: fs.BigIntStats | null } | null {
  let parent: Parent;
  try {
    parent = ctx.root.parentOf(path, 'lstat');
  } catch {
    return null;
  }
  if (parent.name === null) {
    parent.close();
    return null;
  }
  let st: fs.BigIntStats | null = null;
  try {
    st = fs.lstatSync(parent.at(), { bigint: true });
  } catch (e) {
    if (!isNotExist(e)) {
      parent.close();
      throw e;
    }
  }
  return { parent: parent as Parent & { name: string }, st };
}

function slotExists(fd: number, slot: number): boolean {
  try {
    fs.lstatSync(atPath(fd, String(slot)));
    return true;
  } catch (e) {
    if (isNotExist(e)) return false;
    throw e;
  }
}

function settleMoving(trash: Trash, ctx: OpContext, fd: number, r: TrashRecord): void {
  if (r.replace) {
    for (const item of r.items) {
      if (!slotExists(fd, item.slot)) continue;
      const at = entryAt(ctx, item.path);
      if (!at) continue;
      try {
        if (at.st && idText(identityOf(at.st)) === item.id) {
          fs.unlinkSync(atPath(fd, String(item.slot))); // linked, never replaced: the entry is where it was
        } else if (!at.st) {
          ctx.rename(atPath(fd, String(item.slot)), at.parent.at()); // moved aside, new content never landed
          bestEffort(() => ctx.fsync(at.parent.fd));
        }
      } finally {
        at.parent.close();
      }
    }
  }
  sealRecord(trash, ctx, fd, r, (slot) => slotExists(fd, slot));
}

function settleRestoring(trash: Trash, ctx: OpContext, fd: number, r: TrashRecord): void {
  if (r.items.every((i) => !slotExists(fd, i.slot))) {
    trash.forget(r.id);
    return;
  }
  r.items.forEach((item, k) => {
    if (slotExists(fd, item.slot)) return;
    const at = entryAt(ctx, r.dest![k]!);
    if (!at) return;
    try {
      if (at.st && idText(identityOf(at.st)) === item.id) ctx.rename(at.parent.at(), atPath(fd, String(item.slot)));
    } finally {
      at.parent.close();
    }
  });
  bestEffort(() => ctx.fsync(fd));
  removeMade(ctx, r.made ?? []);
  const { dest: _d, made: _m, ...held } = r;
  writeRecord(fd, { ...held, state: 'held' }, ctx.fsync);
}

/** Removes the folders a restore made, deepest first, each only when it is empty. */
export function removeMade(ctx: OpContext, made: readonly string[]): void {
  for (const p of [...made].reverse()) {
    bestEffort(() => {
      const at = entryAt(ctx, p);
      if (!at) return;
      try {
        if (at.st?.isDirectory()) fs.rmdirSync(at.parent.at());
      } finally {
        at.parent.close();
      }
    });
  }
}

/** Settles every unfinished record and removes half-done purges; then purges what has expired. */
export function recoverTrash(ctx: OpContext): void {
  const trash = Trash.open(ctx, false);
  if (!trash) return;
  try {
    trash.sweepPurged();
    for (const id of trash.ids()) {
      const fd = trash.recordFd(id);
      if (fd === null) continue;
      try {
        const r = readRecord(fd, id);
        if (!r) {
          removeIfUnstarted(trash, fd, id);
          continue;
        }
        if (r.state === 'moving') settleMoving(trash, ctx, fd, r);
        else if (r.state === 'restoring') settleRestoring(trash, ctx, fd, r);
      } finally {
        bestEffort(() => fs.closeSync(fd));
      }
    }
    trash.expire();
  } finally {
    trash.close();
  }
}

/** A record folder a Job made and stopped before its record was written holds nothing else: it goes. */
function removeIfUnstarted(trash: Trash, fd: number, id: string): void {
  if (!TRASH_ID.test(id)) return;
  const st = fs.fstatSync(fd);
  if (!st.isDirectory() || (st.mode & 0o777) !== 0o700 || st.uid !== (process.geteuid?.() ?? st.uid)) return;
  const names = fs.readdirSync(atPath(fd, '.'));
  if (names.every((n) => n === 'record.json.tmp')) bestEffort(() => trash.forget(id));
}
