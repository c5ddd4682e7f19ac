/** `PUT /api/v1/servers/:name/file?path=` — replace or create a file, atomically, under the world lock. */
import type { Hono } from 'hono';
import type { Env } from '../../lib/http/app.ts';
import { acceptEvents, routeEvent, serverRoute } from '../../lib/events/entry.ts';
import { audit } from '../../lib/http/audit.ts';
import { sendJson } from '../../lib/http/envelope.ts';
import { openFileCall, underWorldLock } from '../../lib/http/file-call.ts';
import { jsonBody } from '../../lib/http/file-request.ts';
import type { Deps } from '../../lib/http/deps.ts';
import { checkWriteBody, writeBodySchema } from '../../lib/http/write-body.ts';

export const filesWrite = (deps: Deps) => (app: Hono<Env>) => {
  acceptEvents(app, deps.logger, {
    'dev.felis.files.write': routeEvent('PUT', serverRoute('file', { path: true }), true),
  });
  app.put('/api/v1/servers/:name/file', async (c) => {
    const f = await openFileCall(c, deps, 'write');
    const w = checkWriteBody(await jsonBody(c, writeBodySchema));
    const sha256 = await underWorldLock(deps, f, () => f.editor.write(f.target, f.path, w.content, w, f.signal));
    audit(deps.logger, c.get('requestId'), 'file.write', f.target.server, f.path);
    return sendJson(c, 200, { path: f.path, status: 'written', sha256 });
  });
};
