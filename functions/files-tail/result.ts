/**
 * files-tail's result: the Job's report (Result.report), checked for its shape. Pure; the
 * function's side only (never bundled into the Job program).
 * @module
 */
import { checkResult } from '../../lib/files/result-check.ts';
import type { Result } from '../../lib/protocol/result.ts';
import type { TailReport } from './op.ts';

/** Throws what a refusal means (not_found, bad_path …); a report of another shape is the Job's fault, an error of ours. */
export function decodeTail(r: Result): TailReport {
  checkResult(r);
  const t = r.report as TailReport | undefined;
  const ok =
    typeof t === 'object' &&
    t !== null &&
    typeof t.path === 'string' &&
    Array.isArray(t.lines) &&
    t.lines.every((l) => typeof l === 'string') &&
    typeof t.truncated === 'boolean' &&
    typeof t.size === 'number' &&
    Number.isSafeInteger(t.size) &&
    t.size >= 0;
  if (!ok) throw new Error('the tail Job answered no tail report');
  return { path: t.path, lines: t.lines, truncated: t.truncated, size: t.size };
}
