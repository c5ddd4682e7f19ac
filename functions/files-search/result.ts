/**
 * files-search's result: the names that matched and how far the search went, decoded from the
 * Job's Result. Pure; the function's side only (never bundled into the Job program).
 * @module
 */
import { checkResult } from '../../lib/files/result-check.ts';
import type { Result, SearchMatch } from '../../lib/protocol/result.ts';
import type { ContentMatch, ContentReport } from './op.ts';

export interface Search {
  matches: SearchMatch[];
  /** Stopped early: more matches than the limit, or the time budget ran out. */
  truncated: boolean;
  scanned: number;
}

export function decodeSearch(r: Result): Search {
  checkResult(r);
  return { matches: r.matches ?? [], truncated: r.truncated ?? false, scanned: r.scanned ?? 0 };
}

export type ContentSearch = ContentReport;

const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0;
const isMatch = (m: unknown): m is ContentMatch => {
  const o = m as ContentMatch;
  return typeof o === 'object' && o !== null && typeof o.path === 'string' && isCount(o.line) && isCount(o.column) && typeof o.text === 'string';
};

/** A content search's report (Result.report); a report of another shape is the Job's fault, an error of ours. */
export function decodeContentSearch(r: Result): ContentSearch {
  checkResult(r);
  const u = r.report as ContentReport | undefined;
  const ok = typeof u === 'object' && u !== null && Array.isArray(u.matches) && u.matches.every(isMatch) && typeof u.truncated === 'boolean' && isCount(u.scanned_files) && isCount(u.scanned_bytes);
  if (!ok) throw new Error('the search Job answered no content search report');
  return { matches: u.matches.map((m) => ({ path: m.path, line: m.line, column: m.column, text: m.text })), truncated: u.truncated, scanned_files: u.scanned_files, scanned_bytes: u.scanned_bytes };
}
