/**
 * Room on the world volume for the ops that need it, and the one rule by which the trash gives its
 * space back (docs/undo.md, "Time and space"):
 *
 * - A request is first judged against what the volume could ever give it: the free space plus all
 *   the trash holds (`Trash.heldBytes`, the one figure of what the trash could give back). One that
 *   cannot fit even then is refused by its op with the trash untouched.
 * - One that can fit purges records oldest first, only until it does (`Trash.makeRoom`).
 *
 * What an op needs is counted here too, so that every op counts the same way: its bytes plus
 * `PER_ITEM_BYTES` for each file and folder it makes (`roomFor`); a packed archive at most its
 * input's bytes and their headers (`packedRoom`); and, for an op run again after it met a full
 * volume part way, `rerunNeed`.
 *
 * @module
 */
import type { Result } from '../../lib/protocol/result.ts';
import type { OpContext, OpRequest } from '../runtime/types.ts';
import { Trash } from './store.ts';

/** Space counted per file and folder on top of its bytes (a block each). */
export const PER_ITEM_BYTES = 4096;

/** Bytes an op needs for `bytes` of content in `items` files and folders. */
export function roomFor(bytes: number, items: number): number {
  return bytes + items * PER_ITEM_BYTES;
}

/** What a pack's sources hold: file bytes, entries (files and folders) and the bytes of their names. */
export interface PackInput {
  bytes: number;
  entries: number;
  nameBytes: number;
}

/**
 * The most a zip or a compressed tar of `input` can take: its bytes, what compressing data that
 * does not compress adds to them (far below 1/64 for deflate, gzip, xz and zstd), each entry's
 * headers (a zip's local and central records, a tar's header, pax record and padding: a block
 * with its name twice) and the archive's end.
 */
export function packedRoom(input: PackInput): number {
  return roomFor(input.bytes + Math.ceil(input.bytes / 64) + 2 * input.nameBytes, input.entries + 1);
}

function measured(ctx: OpContext): number | undefined {
  try {
    const s = ctx.statfs(ctx.root.dir);
    const free = BigInt(s.bavail) * BigInt(s.bsize);
    return free > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(free);
  } catch {
    return undefined; // statfs failing skips the space check
  }
}

/**
 * Bytes free now; with `need`, after purging the oldest trash until that many are, when the trash
 * holds enough to get there (otherwise nothing is purged and the op refuses with what is free).
 */
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
 * What an op needs to run again after it met a full volume part way: the `need` its refusal
 * reported (an extraction's or a copy's planned bytes, a single compressed file's decoded size, a
 * pack's `packedRoom`), else what its request says: a write its content, its file and the trash
 * record it may make; a mkdir its folder. Undefined when neither tells: then nothing is purged.
 */
export function rerunNeed(req: OpRequest, result: Result): number | undefined {
  if (typeof result.need === 'number' && Number.isSafeInteger(result.need) && result.need > 0) return result.need;
  if (req.op === 'write') return roomFor(req.content?.length ?? 0, 3);
  if (req.op === 'mkdir') return roomFor(0, 1);
  return undefined;
}

/**
 * For an op that met a full volume part way (`result` its `no_space`): purges the oldest trash
 * until what it needs is free, when the trash holds enough for that. True when records went and it
 * now fits, so the op may run once more; false leaves the trash as it was, and the refusal stands
 * (also when the room was there already: the trash is not what it lacked).
 */
export function roomToRunAgain(ctx: OpContext, req: OpRequest, result: Result): boolean {
  const need = rerunNeed(req, result);
  if (need === undefined) return false;
  const before = measured(ctx);
  if (before === undefined || before >= need) return false;
  const after = freeBytes(ctx, need);
  return after !== undefined && after >= need;
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
