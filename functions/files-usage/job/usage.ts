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

/** The volume's size and free bytes from one statfs; -1 for a figure statfs fails on or does not tell. */
function volume(ctx: OpContext): { capacity: number; avail: number } {
  let st: ReturnType<OpContext['statfs']>;
  try {
    st = ctx.statfs(ctx.root.dir);
  } catch {
    return { capacity: -1, avail: -1 };
  }
  const bytes = (n: bigint | number | undefined) => {
    if (n === undefined) return -1;
    const b = BigInt(n) * BigInt(st.bsize);
    return b < 0n || b > BigInt(Number.MAX_SAFE_INTEGER) ? -1 : Number(b);
  };
  return { capacity: bytes(st.blocks), avail: bytes(st.bavail) };
}

export async function usage(ctx: OpContext, req: OpRequestOf<'usage'>): Promise<Result> {
  const walked = await usageWalk(ctx.root, req.path, { depth: req.depth ?? USAGE_DEPTH.default, top: req.top ?? USAGE_TOP.default });
  if (!('largest' in walked)) return walked; // a refusal (not_found, bad_path)
  const { capacity, avail } = volume(ctx);
  const report: UsageReport = {
    ...walked,
    capacity,
    // What a write can use, as a listing says it: the free space and what the whole undo trash gives back.
    free: avail < 0 ? -1 : avail + trashBytes(ctx),
    scanned_at: new Date(ctx.now()).toISOString(),
  };
  return { report };
}

export const runs = { usage };
