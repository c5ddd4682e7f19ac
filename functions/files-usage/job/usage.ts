/**
 * The usage op's run: the walk (usage-walk.ts) under its budget, with the volume's size and free
 * space beside it, as the report its result.ts decodes (Result.report).
 *
 * In a browse Pod (`ctx.warm`) the walk's figures are kept per (path, depth, top) and given again
 * while every folder below the path is unchanged and the answer is younger than WARM_MAX_AGE_MS
 * (job/runtime/warm-results.ts says why both); the volume's figures are read anew each time, and
 * `scanned_at` stays the walk's. A walk cut short is never kept.
 * @module
 */
import type { OpContext, OpRequestOf } from '../../../job/runtime/types.ts';
import { trashBytes } from '../../../job/trash/room.ts';
import { USAGE_WARM_BUDGET_MS } from '../../../lib/protocol/limits.ts';
import type { Result } from '../../../lib/protocol/result.ts';
import { USAGE_DEPTH, USAGE_TOP, type UsageFigures, type UsageReport } from '../op.ts';
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

/** What a browse Pod keeps of one walk: the figures and when the walk ran (the answer's `scanned_at`). */
interface WarmUsage {
  figures: UsageFigures;
  scannedAt: string;
}

export async function usage(ctx: OpContext, req: OpRequestOf<'usage'>): Promise<Result> {
  const opts = { depth: req.depth ?? USAGE_DEPTH.default, top: req.top ?? USAGE_TOP.default };
  const warm = ctx.warm;
  // One answer per asked path and shape; the path as asked, so `unchanged` opens what the walk opened.
  const key = JSON.stringify([req.path, opts.depth, opts.top]);
  let kept = warm?.get(key, ctx.root, req.path === '' ? '.' : req.path) as WarmUsage | undefined;
  if (!kept) {
    const wall = ctx.now();
    const stamps = warm?.stamps(wall);
    const startedAt = warm?.now() ?? 0;
    const scannedAt = new Date(wall).toISOString();
    // In a browse Pod the walk answers well within the caller's call timeout; a truncated answer
    // sends the caller to the one-shot Job (functions/files-usage/app.ts), whose budget is longer.
    const walked = await usageWalk(ctx.root, req.path, { ...opts, ...(warm ? { budgetMs: USAGE_WARM_BUDGET_MS, folders: stamps } : {}) });
    if (!('largest' in walked)) return walked; // a refusal (not_found, bad_path)
    kept = { figures: walked, scannedAt };
    if (warm && stamps && !walked.truncated) warm.put(key, kept, stamps, startedAt);
  }
  const { capacity, avail } = volume(ctx);
  const report: UsageReport = {
    ...kept.figures,
    capacity,
    // What a write can use, as a listing says it: the free space and what the whole undo trash gives back.
    free: avail < 0 ? -1 : avail + trashBytes(ctx),
    scanned_at: kept.scannedAt,
  };
  return { report };
}

export const runs = { usage };
