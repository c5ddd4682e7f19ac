/**
 * `POST /api/v1/servers/:name/files/zip?path=<file or folder>` body `{name?}` — pack into a `.zip`
 * next to it, in the background: a free name (`world.zip`, `world (2).zip`, …) unless `name` is
 * given. It writes to the world, so it holds it like a write: the world lock around the Job's
 * creation, then the Job. Answers 202 `{op}`.
 */
import type { Hono } from 'hono';
import { z } from 'zod';
import type { Env } from '../../lib/http/app.ts';
import { acceptEvents, routeEvent, serverRoute } from '../../lib/events/entry.ts';
import { checkZipName } from '../../lib/files/archive-names.ts';
import { audit } from '../../lib/http/audit.ts';
import { sendJson } from '../../lib/http/envelope.ts';
import { openFileCall, underWorldLock } from '../../lib/http/file-call.ts';
import { jsonBody } from '../../lib/http/file-request.ts';
import type { Deps } from '../../lib/http/deps.ts';

const zipBody = z.strictObject({ name: z.string().optional() });

export const filesZip = (deps: Deps) => (app: Hono<Env>) => {
  acceptEvents(app, deps.logger, {
    'dev.felis.files.zip': routeEvent('POST', serverRoute('files/zip', { path: true }), true),
  });
  app.post('/api/v1/servers/:name/files/zip', async (c) => {
    const f = await openFileCall(c, deps, 'zip');
    const { name } = await jsonBody(c, zipBody);
    if (name !== undefined) checkZipName(name);
    const req = { op: 'zip' as const, path: f.path, ...(name !== undefined ? { to: name } : {}) };
    const earlier = await f.editor.earlierOp(f.target.server, req);
    if (earlier) return sendJson(c, 202, { op: earlier });
    const op = await underWorldLock(deps, f, () => f.editor.start(f.target, req));
    audit(deps.logger, c.get('requestId'), 'file.zip', f.target.server, f.path, { ...(name !== undefined ? { name } : {}), op: op.id });
    return sendJson(c, 202, { op });
  });
};
