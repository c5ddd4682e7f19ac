/**
 * The usage op's run: the walk (usage-walk.ts) under its budget, with the volume's size and free
 * space beside it, as the report its result.ts decodes (Result.report).
 * @module
 */
import type { OpContext, OpRequestOf } from '../../../job/runtime/types.ts';
import { trashBytes } from '../../../job/trash/room.ts';
import type { Result } from '../../../lib/protocol/result.ts';
import { USAGE_DEPTH, USAGE_TOP, type UsageReport } from '../op.ts';
import { usageWalk } from './usage-walk.ts';

/** Bytes of `blocks` blocks of `bsize`, or -1 when statfs fails or tells no size. */
function volumeBytes(ctx: OpContext, pick: 'blocks' | 'bavail'): number {
  try {
    const st = ctx.statfs(ctx.root.dir);
    const n = st[pick];
    if (n === undefined) return -1;
    const bytes = BigInt(n) * BigInt(st.bsize);
    return bytes < 0n || bytes > BigInt(Number.MAX_SAFE_INTEGER) ? -1 : Number(bytes);
  } catch {
    return -1;
  }
}

export async function usage(ctx: OpContext, req: OpRequestOf<'usage'>): Promise<Result> {
  const walked = await usageWalk(ctx.root, req.path, { depth: req.depth ?? USAGE_DEPTH.default, top: req.top ?? USAGE_TOP.default });
  if (!('largest' in walked)) return walked; // a refusal (not_found, bad_path)
  const avail = volumeBytes(ctx, 'bavail');
  const report: UsageReport = {
    ...walked,
    capacity: volumeBytes(ctx, 'blocks'),
    // What a write can use, as a listing says it: the free space and what the whole undo trash gives back.
    free: avail < 0 ? -1 : avail + trashBytes(ctx),
    scanned_at: new Date(ctx.now()).toISOString(),
  };
  return { report };
}

export const runs = { usage };
