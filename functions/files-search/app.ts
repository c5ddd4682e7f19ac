/**
 * `GET /api/v1/servers/:name/files/search?path=&q=&limit=` — entries below a folder, at any depth,
 * whose name matches `q` (functions/files-search/job/search.ts). A read: no lock, no audit, answered by the browse
 * Pod when one is warm, else by a read-only one-shot Job.
 */
import type { Context } from 'hono';
import type { Deps } from '../../lib/http/deps.ts';
import { sendJson } from '../../lib/http/envelope.ts';
import { openFileCall } from '../../lib/http/file-call.ts';
import { defineFunction, type RouteInput } from '../../lib/http/routes/register.ts';
import { openViaSession } from '../../lib/http/via-session.ts';
import { decodeSearch } from './result.ts';

interface SearchQuery {
  q: string;
  limit?: number;
}

export const filesSearch = defineFunction('files-search', (deps) => ({
  'files.search': async (c, input) => {
    const query = await searchQuery(c, deps, input);
    // A browse session answers as the one-shot Job would, only sooner; without one, the Job runs.
    const { call: f, result: s } = await openViaSession(c, deps, 'search', decodeSearch, (f) => f.editor.search(f.target, f.path, query, f.signal), query);
    return sendJson(c, 200, { path: f.path, q: query.q, matches: s.matches, truncated: s.truncated, scanned: s.scanned });
  },
}));

/**
 * `q` and `limit`, as the schema reads them. A bad one is answered after the common front (name,
 * path, gates), as every file route answers its own input after it: a missing server is a 404
 * whatever the query.
 */
async function searchQuery(c: Context, deps: Deps, input: RouteInput<{ q: string; limit?: number }, never>): Promise<SearchQuery> {
  try {
    const { q, limit } = input.query();
    return limit === undefined ? { q } : { q, limit };
  } catch (err) {
    await openFileCall(c, deps, 'search');
    throw err;
  }
}
