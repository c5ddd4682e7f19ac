/** `POST /api/v1/servers/:name/files/rename?path=` body `{to}` — move without replacing, under the world lock. */
import type { Hono } from 'hono';
import { z } from 'zod';
import type { Env } from '../../lib/http/app.ts';
import { acceptEvents, routeEvent, serverRoute } from '../../lib/events/entry.ts';
import { audit } from '../../lib/http/audit.ts';
import { badRequest, sendJson } from '../../lib/http/envelope.ts';
import { openFileCall, underWorldLock } from '../../lib/http/file-call.ts';
import { checkPath, jsonBody } from '../../lib/http/file-request.ts';
import type { Deps } from '../../lib/http/deps.ts';

const renameBody = z.strictObject({ to: z.string().optional() });

export const filesRename = (deps: Deps) => (app: Hono<Env>) => {
  acceptEvents(app, deps.logger, {
    'dev.felis.files.rename': routeEvent('POST', serverRoute('files/rename', { path: true }), true),
  });
  app.post('/api/v1/servers/:name/files/rename', async (c) => {
    const f = await openFileCall(c, deps, 'rename');
    const { to } = await jsonBody(c, renameBody);
    if (!to) throw badRequest('the to field is required');
    checkPath(to);
    await underWorldLock(deps, f, () => f.editor.rename(f.target, f.path, to, f.signal));
    audit(deps.logger, c.get('requestId'), 'file.rename', f.target.server, f.path, { to });
    return sendJson(c, 200, { path: f.path, to, status: 'renamed' });
  });
};
