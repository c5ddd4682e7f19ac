/**
 * files-usage's result: the Job's report (Result.report), checked for its shape and decoded into
 * the answer. Pure; the function's side only (never bundled into the Job program).
 * @module
 */
import { checkResult } from '../../lib/files/result-check.ts';
import type { Result } from '../../lib/protocol/result.ts';
import type { UsageChild, UsageReport } from './op.ts';

/** The answer: the Job's report, the volume's figures as the API names them (null where the Job could not tell). */
export type Usage = Omit<UsageReport, 'capacity' | 'free'> & { capacity_bytes: number | null; free_bytes: number | null };

const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v >= -1;
const isChild = (c: unknown): c is UsageChild => {
  const o = c as UsageChild;
  return (
    typeof o === 'object' &&
    o !== null &&
    typeof o.name === 'string' &&
    isCount(o.bytes) &&
    isCount(o.apparent_bytes) &&
    isCount(o.files) &&
    typeof o.is_dir === 'boolean' &&
    (o.children === undefined || (Array.isArray(o.children) && o.children.every(isChild)))
  );
};

/** Throws what a refusal means (not_found, bad_path …); a report of another shape is the Job's fault, an error of ours. */
export function decodeUsage(r: Result): Usage {
  checkResult(r);
  const u = r.report as UsageReport | undefined;
  const ok =
    typeof u === 'object' &&
    u !== null &&
    typeof u.path === 'string' &&
    [u.bytes, u.apparent_bytes, u.files, u.dirs, u.trash_bytes, u.capacity, u.free].every(isCount) &&
    Array.isArray(u.children) &&
    u.children.every(isChild) &&
    Array.isArray(u.largest) &&
    u.largest.every((l) => typeof l?.path === 'string' && isCount(l.bytes) && isCount(l.apparent_bytes)) &&
    typeof u.scanned_at === 'string' &&
    typeof u.truncated === 'boolean';
  if (!ok) throw new Error('the usage Job answered no usage report');
  return {
    path: u.path,
    bytes: u.bytes,
    apparent_bytes: u.apparent_bytes,
    files: u.files,
    dirs: u.dirs,
    children: u.children,
    largest: u.largest,
    capacity_bytes: u.capacity < 0 ? null : u.capacity,
    free_bytes: u.free < 0 ? null : u.free,
    trash_bytes: u.trash_bytes,
    scanned_at: u.scanned_at,
    truncated: u.truncated,
  };
}
