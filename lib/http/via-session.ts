/**
 * The list and read functions' use of a browse session: ask the session first, decode its Result
 * exactly as a one-shot Job's, and run the one-shot Job when no session can answer.
 *
 * `openViaSession` also overlaps the two waits of a warm request: the call to the browse Pod this
 * instance remembers for the server starts together with the entry gates (the server and claim
 * reads), and its answer is used only once the gates have let the request through, for the world
 * they named. A request the gates refuse gets their refusal, exactly as without a session.
 * @module
 */
import type { Context } from 'hono';
import type { BrowseChannel, BrowseOp, EarlyCall, RunOptions } from '../browse/sessions.ts';
import type { Target } from '../job-spec/types.ts';
import type { OpQuery } from '../protocol/op-query.ts';
import { opHas } from '../protocol/ops.ts';
import type { Result } from '../protocol/result.ts';
import { parseResultPayload } from '../protocol/result-parse.ts';
import type { Deps } from './deps.ts';
import { type FileCall, openFileCall } from './file-call.ts';
import { queryPath, serverName } from './file-request.ts';

export async function viaSessionOr<T>(
  browse: BrowseChannel | undefined,
  call: { target: Target; path: string; signal: AbortSignal },
  op: BrowseOp,
  decode: (r: Result) => T,
  oneShot: () => Promise<T>,
  early?: EarlyCall,
  query?: OpQuery,
  o?: RunOptions,
): Promise<T> {
  const payload = browse ? await browse.run(call.target, op, call.path, call.signal, early, query, ...(o ? [o] : [])) : undefined;
  if (payload === undefined) return oneShot();
  return decode(parseResultPayload(payload));
}

/**
 * The gates, then the session or the one-shot Job, with the session call already under way while
 * the gates read the server. Answers the file call (for the route's reply) and the decoded result.
 * `query` (the op's paging and filter) goes to the session as it goes to the one-shot Job; `o`
 * says how the session may be reached (`start: false`: only one already serving).
 */
export async function openViaSession<T>(
  c: Context,
  deps: Deps,
  op: BrowseOp,
  decode: (r: Result) => T,
  oneShot: (f: FileCall) => Promise<T>,
  query?: OpQuery,
  o?: RunOptions,
): Promise<{ call: FileCall; result: T }> {
  const early = startEarly(c, deps, op, query);
  let call: FileCall;
  try {
    call = await openFileCall(c, deps, op);
  } catch (err) {
    early?.cancel();
    throw err;
  }
  const result = await viaSessionOr(deps.browse, call, op, decode, () => oneShot(call), early, query, o);
  return { call, result };
}

/** The early call, when the request is well formed enough to have one; openFileCall reports the rest. */
function startEarly(c: Context, deps: Deps, op: BrowseOp, query?: OpQuery): EarlyCall | undefined {
  if (!deps.browse?.early || !deps.editor) return undefined;
  let server: string;
  let path: string;
  try {
    server = serverName(c);
    path = queryPath(c, false);
  } catch {
    return undefined;
  }
  // A path openFileCall refuses (the root, for an op that needs a path) gets no early call either.
  if (path === '' && !opHas(op, 'rootPath')) return undefined;
  return deps.browse.early(server, op, path, c.req.raw.signal, query);
}
