/** `GET /api/v1/servers/:name/file?path=` — a file's bytes, base64. No lock. */
import type { Hono } from 'hono';
import type { Env } from '../../lib/http/app.ts';
import { sendJson } from '../../lib/http/envelope.ts';
import { queryPath, serverName } from '../../lib/http/file-request.ts';
import { requireEditor, type Deps } from '../../lib/http/deps.ts';

export const filesRead = (deps: Deps) => (app: Hono<Env>) => {
  app.get('/api/v1/servers/:name/file', async (c) => {
    const server = serverName(c);
    const path = queryPath(c, true);
    const target = await deps.gates.enter(server, { route: 'file', method: 'GET', path });
    const f = await requireEditor(deps).read(target, path, c.req.raw.signal);
    // sha256 is of the bytes on disk (send it back as expect_sha256); content_sha256 of what is sent.
    return sendJson(c, 200, { path, content: f.content.toString('base64'), sha256: f.sha256, content_sha256: f.contentSha256 });
  });
};
