/** `POST /api/v1/servers/:name/files/mkdir?path=` — one new folder, under the world lock. */
import type { Hono } from 'hono';
import type { Env } from '../../lib/http/app.ts';
import { audit } from '../../lib/http/audit.ts';
import { sendJson } from '../../lib/http/envelope.ts';
import { queryPath, serverName } from '../../lib/http/file-request.ts';
import { requireEditor, type Deps } from '../../lib/http/deps.ts';
import { underLock } from '../../lib/files/gates.ts';

export const filesMkdir = (deps: Deps) => (app: Hono<Env>) => {
  app.post('/api/v1/servers/:name/files/mkdir', async (c) => {
    const server = serverName(c);
    const path = queryPath(c, true);
    const req = { route: 'files/mkdir', method: 'POST', path } as const;
    const target = await deps.gates.enter(server, req);
    const editor = requireEditor(deps);
    await underLock(deps.gates, server, req, () => editor.mkdir(target, path, c.req.raw.signal), (err) =>
      deps.logger.warn({ err, server }, 'lock release failed'),
    );
    audit(deps.logger, c.get('requestId'), 'file.mkdir', server, path);
    return sendJson(c, 200, { path, status: 'created' });
  });
};
