/**
 * files-search's op: names under a folder that match a name or glob; with `text` (the route's
 * `content`), the lines of the files there that hold it.
 * @module
 */
import { opContract, queryCodec } from '../../lib/protocol/op-contract.ts';

export const search = opContract('search', { serve: true, rootPath: true }, queryCodec);

// A content search's report (Result.report), written by job/content-search.ts and decoded by
// result.ts: one shape on both sides of the log line.

/** One line found: its file's path from the world's root, where, and the line around the match. */
export interface ContentMatch {
  path: string;
  line: number;
  column: number;
  text: string;
}

/** The Job's answer (Result.report), decoded by result.ts. */
export interface ContentReport {
  matches: ContentMatch[];
  /** Stopped early (limit, time or bytes), or a text file over the size limit was skipped. */
  truncated: boolean;
  /** Files opened and read (binary ones included: their first bytes were). */
  scanned_files: number;
  /** Bytes read from them. */
  scanned_bytes: number;
}
