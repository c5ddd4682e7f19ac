/**
 * The list and read functions' use of a browse session: ask the session first, decode its Result
 * exactly as a one-shot Job's, and run the one-shot Job when no session can answer.
 * @module
 */
import type { Target } from '../files/editor.ts';
import { parseResultPayload } from '../protocol/result-parse.ts';
import type { Result } from '../protocol/result.ts';
import type { BrowseOp } from './sessions.ts';

/** What a route needs of browse sessions (BrowseSessions, or a fake in route tests). */
export interface BrowseChannel {
  run(t: Target, op: BrowseOp, path: string, signal?: AbortSignal): Promise<string | undefined>;
}

export async function viaSessionOr<T>(
  browse: BrowseChannel | undefined,
  call: { target: Target; path: string; signal: AbortSignal },
  op: BrowseOp,
  decode: (r: Result) => T,
  oneShot: () => Promise<T>,
): Promise<T> {
  const payload = browse ? await browse.run(call.target, op, call.path, call.signal) : undefined;
  if (payload === undefined) return oneShot();
  return decode(parseResultPayload(payload));
}
