/** `GET /api/v1/servers/:name/files?path=` — one folder's entries. No lock. */
import type { Hono } from 'hono';
import type { Env } from '../../lib/http/app.ts';
import { sendJson } from '../../lib/http/envelope.ts';
import { queryPath, serverName } from '../../lib/http/file-request.ts';
import { requireEditor, type Deps } from '../../lib/http/deps.ts';

export const filesList = (deps: Deps) => (app: Hono<Env>) => {
  app.get('/api/v1/servers/:name/files', async (c) => {
    const server = serverName(c);
    const path = queryPath(c, false);
    const target = await deps.gates.enter(server, { route: 'files', method: 'GET', path });
    const l = await requireEditor(deps).list(target, path, c.req.raw.signal);
    // free_bytes: 0 on a full volume, null when the Job could not tell.
    return sendJson(c, 200, { path, entries: l.entries, truncated: l.truncated, free_bytes: l.free < 0 ? null : l.free });
  });
};
