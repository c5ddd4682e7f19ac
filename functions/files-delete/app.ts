/** `DELETE /api/v1/servers/:name/file?path=` — a file, or a folder recursively, under the world lock. */
import type { Hono } from 'hono';
import type { Env } from '../../lib/http/app.ts';
import { acceptEvents, routeEvent, serverRoute } from '../../lib/events/entry.ts';
import { audit } from '../../lib/http/audit.ts';
import { sendJson } from '../../lib/http/envelope.ts';
import { openFileCall, underWorldLock } from '../../lib/http/file-call.ts';
import type { Deps } from '../../lib/http/deps.ts';

export const filesDelete = (deps: Deps) => (app: Hono<Env>) => {
  acceptEvents(app, deps.logger, {
    'dev.felis.files.delete': routeEvent('DELETE', serverRoute('file', { path: true })),
  });
  app.delete('/api/v1/servers/:name/file', async (c) => {
    const f = await openFileCall(c, deps, 'delete');
    await underWorldLock(deps, f, () => f.editor.delete(f.target, f.path, f.signal));
    audit(deps.logger, c.get('requestId'), 'file.delete', f.target.server, f.path);
    return sendJson(c, 200, { path: f.path, status: 'deleted' });
  });
};
