/**
 * The optional query of a read-only op, beside its path: paging and filtering, and a usage
 * answer's shape (`depth`, `top`). The route parses it,
 * the functions carry it unchanged to the one-shot Job (as flags) or to a browse Pod (as URL query
 * parameters), and the Job's op reads it. One shape on every hop, so a warm and a cold answer agree.
 * @module
 */

export interface OpQuery {
  /** The most entries one answer holds. */
  limit?: number;
  /** The answer starts strictly after this name (byte order); it need not exist. */
  after?: string;
  /** Case-insensitive substring a name must contain. */
  q?: string;
  /**
   * search: the literal text a file's lines are searched for, ASCII letters in any case (a content
   * search; the route's `content=`, named apart from a write's content).
   */
  text?: string;
  /** usage: how deep the folders' sizes go. */
  depth?: number;
  /** usage: how many of the largest files. */
  top?: number;
}

/** The query's fields, in the order they go on a command line or into a URL. */
export const OP_QUERY_KEYS = ['limit', 'after', 'q', 'text', 'depth', 'top'] as const;
export type OpQueryKey = (typeof OP_QUERY_KEYS)[number];

/** Only the fields that are set: what a Job or a browse Pod is given. */
export function setQuery(q: OpQuery | undefined): OpQuery {
  const out: OpQuery = {};
  if (q?.limit !== undefined) out.limit = q.limit;
  if (q?.after !== undefined) out.after = q.after;
  if (q?.q !== undefined) out.q = q.q;
  if (q?.text !== undefined) out.text = q.text;
  if (q?.depth !== undefined) out.depth = q.depth;
  if (q?.top !== undefined) out.top = q.top;
  return out;
}

/** `&limit=…&after=…&q=…&text=…&depth=…&top=…` for the fields that are set (empty when none). */
export function queryString(q: OpQuery | undefined): string {
  let s = '';
  for (const [k, v] of Object.entries(setQuery(q))) s += `&${k}=${encodeURIComponent(String(v))}`;
  return s;
}

/** The same query, as a key two calls can be compared by. */
export function queryKey(q: OpQuery | undefined): string {
  return JSON.stringify(setQuery(q));
}

/** A paged listing's page size when none is asked for, and the largest one may ask for. */
export const PAGE_DEFAULT_ENTRIES = 1000;
export const PAGE_MAX_ENTRIES = 5000;
/** A listing without a query (Felis's): the first this many entries, in directory order. */
export const PLAIN_LIST_ENTRIES = 2000;
