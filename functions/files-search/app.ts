/**
 * `GET /api/v1/servers/:name/files/search?path=&q=&content=&limit=` — entries below a folder, at
 * any depth, whose name matches `q` (functions/files-search/job/search.ts); with `content`, the lines
 * of the text files there that hold it (job/content-search.ts), only in files named as `q` when
 * given. One route and one op for both. A read: no lock, no audit, answered by the browse Pod when
 * one is warm, else by a read-only one-shot Job.
 */
import type { Context } from 'hono';
import { DomainError } from '../../lib/errors.ts';
import type { Deps } from '../../lib/http/deps.ts';
import { sendJson } from '../../lib/http/envelope.ts';
import { openFileCall } from '../../lib/http/file-call.ts';
import { defineFunction, type RouteInput } from '../../lib/http/routes/register.ts';
import { openViaSession } from '../../lib/http/via-session.ts';
import { SEARCH_MIN_QUERY } from '../../lib/protocol/limits.ts';
import { decodeContentSearch, decodeSearch } from './result.ts';

interface SearchQuery {
  q?: string;
  content?: string;
  limit?: number;
}

export const filesSearch = defineFunction('files-search', (deps) => ({
  'files.search': async (c, input) => {
    const query = await searchQuery(c, deps, input);
    if (query.content !== undefined) {
      // The op's query names the text `text` (a write's `content` is its bytes).
      const job = { text: query.content, ...(query.q !== undefined ? { q: query.q } : {}), ...(query.limit !== undefined ? { limit: query.limit } : {}) };
      const { call: f, result: s } = await openViaSession(c, deps, 'search', decodeContentSearch, (f) => f.editor.searchContent(f.target, f.path, job, f.signal), job);
      return sendJson(c, 200, { path: f.path, ...(query.q !== undefined ? { q: query.q } : {}), content: query.content, ...s, world_state: f.target.worldState ?? 'stopped' });
    }
    const named = { q: query.q as string, ...(query.limit !== undefined ? { limit: query.limit } : {}) };
    // A browse session answers as the one-shot Job would, only sooner; without one, the Job runs.
    const { call: f, result: s } = await openViaSession(c, deps, 'search', decodeSearch, (f) => f.editor.search(f.target, f.path, named, f.signal), named);
    return sendJson(c, 200, { path: f.path, q: named.q, matches: s.matches, truncated: s.truncated, scanned: s.scanned });
  },
}));

/**
 * `q`, `content` and `limit`, as the schema reads them; `q` is needed unless `content` is given. A
 * bad one is answered after the common front (name, path, gates), as every file route answers its
 * own input after it: a missing server is a 404 whatever the query.
 */
async function searchQuery(c: Context, deps: Deps, input: RouteInput<{ q?: string; content?: string; limit?: number }, never>): Promise<SearchQuery> {
  try {
    const { q, content, limit } = input.query();
    if (q === undefined && content === undefined) throw new DomainError('bad_request', 'invalid', `?q= needs at least ${SEARCH_MIN_QUERY} characters (or give ?content= to search the files' text)`);
    return { ...(q !== undefined ? { q } : {}), ...(content !== undefined ? { content } : {}), ...(limit !== undefined ? { limit } : {}) };
  } catch (err) {
    await openFileCall(c, deps, 'search');
    throw err;
  }
}
