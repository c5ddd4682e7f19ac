/** `POST /api/v1/servers/:name/files/mkdir?path=` — one new folder, under the world lock. */
import type { Hono } from 'hono';
import type { Env } from '../../lib/http/app.ts';
import { acceptEvents, routeEvent, serverRoute } from '../../lib/events/entry.ts';
import { audit } from '../../lib/http/audit.ts';
import { sendJson } from '../../lib/http/envelope.ts';
import { openFileCall, underWorldLock } from '../../lib/http/file-call.ts';
import type { Deps } from '../../lib/http/deps.ts';

export const filesMkdir = (deps: Deps) => (app: Hono<Env>) => {
  acceptEvents(app, deps.logger, {
    'dev.felis.files.mkdir': routeEvent('POST', serverRoute('files/mkdir', { path: true })),
  });
  app.post('/api/v1/servers/:name/files/mkdir', async (c) => {
    const f = await openFileCall(c, deps, 'mkdir');
    await underWorldLock(deps, f, () => f.editor.mkdir(f.target, f.path, f.signal));
    audit(deps.logger, c.get('requestId'), 'file.mkdir', f.target.server, f.path);
    return sendJson(c, 200, { path: f.path, status: 'created' });
  });
};
