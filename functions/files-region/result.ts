/**
 * files-region's results: the region and region-plan Jobs' reports (Result.report), checked for
 * their shape. The Job's own refusal, `region_invalid`, is the handler's to throw (app.ts). Pure;
 * the function's side only (never bundled into the Job program).
 * @module
 */
import { checkResult } from '../../lib/files/result-check.ts';
import type { Result } from '../../lib/protocol/result.ts';
import type { PruneReport, RegionReport } from './op.ts';

/** The Job's refusal of a file that is no region file: its message, else undefined. */
export function regionInvalid(r: Result): string | undefined {
  return r.code === 'region_invalid' ? (r.error ?? 'the file cannot be read as a region file') : undefined;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

/** Throws what any other refusal means; a report of another shape is the Job's fault, an error of ours. */
export function decodeRegionReport(r: Result): RegionReport {
  checkResult(r);
  const n = r.report as RegionReport | undefined;
  const ok =
    isObj(n) &&
    typeof n.path === 'string' &&
    Array.isArray(n.chunks) &&
    n.chunks.every((c) => isObj(c) && typeof c.x === 'number' && typeof c.z === 'number') &&
    typeof n.sectors_used === 'number' &&
    typeof n.sectors_free === 'number';
  if (!ok) throw new Error('the region Job answered no region report');
  return n;
}

export function decodePruneReport(r: Result): PruneReport {
  checkResult(r);
  const n = r.report as PruneReport | undefined;
  const ok =
    isObj(n) &&
    typeof n.region === 'string' &&
    typeof n.below === 'string' &&
    typeof n.scanned === 'number' &&
    typeof n.files_changed === 'number' &&
    Array.isArray(n.files) &&
    typeof n.chunks_removed === 'number' &&
    typeof n.bytes_freed === 'number' &&
    typeof n.unreadable_chunks === 'number' &&
    Array.isArray(n.skipped);
  if (!ok) throw new Error('the region-plan Job answered no prune report');
  return n;
}
