/** `DELETE /api/v1/servers/:name/file?path=` — a file, or a folder recursively, under the world lock. */
import type { Hono } from 'hono';
import type { Env } from '../../lib/http/app.ts';
import { audit } from '../../lib/http/audit.ts';
import { sendJson } from '../../lib/http/envelope.ts';
import { queryPath, serverName } from '../../lib/http/file-request.ts';
import { requireEditor, type Deps } from '../../lib/http/deps.ts';
import { underLock } from '../../lib/files/gates.ts';

export const filesDelete = (deps: Deps) => (app: Hono<Env>) => {
  app.delete('/api/v1/servers/:name/file', async (c) => {
    const server = serverName(c);
    const path = queryPath(c, true);
    const req = { route: 'file', method: 'DELETE', path } as const;
    const target = await deps.gates.enter(server, req);
    const editor = requireEditor(deps);
    await underLock(deps.gates, server, req, () => editor.delete(target, path, c.req.raw.signal), (err) =>
      deps.logger.warn({ err, server }, 'lock release failed'),
    );
    audit(deps.logger, c.get('requestId'), 'file.delete', server, path);
    return sendJson(c, 200, { path, status: 'deleted' });
  });
};
