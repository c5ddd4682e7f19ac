/** `POST /api/v1/servers/:name/files/rename?path=` body `{to}` — move without replacing, under the world lock. */
import type { Hono } from 'hono';
import { z } from 'zod';
import type { Env } from '../../lib/http/app.ts';
import { audit } from '../../lib/http/audit.ts';
import { badRequest, sendJson } from '../../lib/http/envelope.ts';
import { jsonBody, queryPath, serverName } from '../../lib/http/file-request.ts';
import { requireEditor, type Deps } from '../../lib/http/deps.ts';
import { underLock } from '../../lib/files/gates.ts';

const renameBody = z.strictObject({ to: z.string().optional() });

export const filesRename = (deps: Deps) => (app: Hono<Env>) => {
  app.post('/api/v1/servers/:name/files/rename', async (c) => {
    const server = serverName(c);
    const path = queryPath(c, true);
    const req = { route: 'files/rename', method: 'POST', path } as const;
    const target = await deps.gates.enter(server, req);
    const editor = requireEditor(deps);
    const { to } = await jsonBody(c, renameBody);
    if (!to) throw badRequest('the to field is required');
    if (to.includes('\0')) throw badRequest('the to field cannot contain a NUL byte');
    await underLock(deps.gates, server, req, () => editor.rename(target, path, to, c.req.raw.signal), (err) =>
      deps.logger.warn({ err, server }, 'lock release failed'),
    );
    audit(deps.logger, c.get('requestId'), 'file.rename', server, path, { to });
    return sendJson(c, 200, { path, to, status: 'renamed' });
  });
};
