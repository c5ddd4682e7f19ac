/**
 * files-search's result: the names that matched and how far the search went, decoded from the
 * Job's Result. Pure; the function's side only (never bundled into the Job program).
 * @module
 */
import { checkResult } from '../../lib/files/result-check.ts';
import type { Result, SearchMatch } from '../../lib/protocol/result.ts';

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
