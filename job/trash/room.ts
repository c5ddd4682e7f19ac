/**
 * Free space on the world volume, as the ops that need room ask for it. The trash never makes an op
 * fail for space: asked for `need` bytes that are not free, this purges trash records oldest first
 * until they are (or the trash is empty), before the op answers `no_space`.
 * @module
 */
import type { OpContext } from '../types.ts';
import { Trash } from './store.ts';

function measured(ctx: OpContext): number | undefined {
  try {
    const s = ctx.statfs(ctx.root.dir);
    const free = BigInt(s.bavail) * BigInt(s.bsize);
    return free > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(free);
  } catch {
    return undefined; // statfs failing skips the space check
  }
}

/** Bytes free now; with `need`, after purging the oldest trash until that many are (when it can). */
export function freeBytes(ctx: OpContext, need?: number): number | undefined {
  const avail = measured(ctx);
  if (need === undefined || avail === undefined || avail >= need) return avail;
  const trash = Trash.open(ctx, false);
  if (!trash) return avail;
  try {
    return trash.makeRoom(need, () => measured(ctx));
  } finally {
    trash.close();
  }
}

/**
 * For an op that met a full volume part way (its size unknown before it ran): purges the older half
 * of the trash (at least one record). True when something went, so the op may run once more.
 */
export function purgeOlderHalf(ctx: OpContext): boolean {
  const trash = Trash.open(ctx, false);
  if (!trash) return false;
  try {
    const ids = trash.ids().reverse();
    const n = Math.max(1, Math.ceil(ids.length / 2));
    let purged = 0;
    for (const id of ids.slice(0, n)) if (trash.purge(id, true) !== null) purged++;
    return purged > 0;
  } finally {
    trash.close();
  }
}

/** Bytes the trash holds (what a mutation can give back): `free_bytes` counts them, and a listing says so. */
export function trashBytes(ctx: OpContext): number {
  const trash = Trash.open(ctx, false);
  if (!trash) return 0;
  try {
    return trash.heldBytes();
  } catch {
    return 0; // a listing never fails for the trash
  } finally {
    trash.close();
  }
}
