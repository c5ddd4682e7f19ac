/** `PUT /api/v1/servers/:name/file?path=` — replace or create a file, atomically, under the world lock. */
import type { Hono } from 'hono';
import type { Env } from '../../lib/http/app.ts';
import { audit } from '../../lib/http/audit.ts';
import { sendJson } from '../../lib/http/envelope.ts';
import { jsonBody, queryPath, serverName } from '../../lib/http/file-request.ts';
import { requireEditor, type Deps } from '../../lib/http/deps.ts';
import { checkWriteBody, writeBodySchema } from '../../lib/http/write-body.ts';
import { underLock } from '../../lib/files/gates.ts';

export const filesWrite = (deps: Deps) => (app: Hono<Env>) => {
  app.put('/api/v1/servers/:name/file', async (c) => {
    const server = serverName(c);
    const path = queryPath(c, true);
    const req = { route: 'file', method: 'PUT', path } as const;
    const target = await deps.gates.enter(server, req);
    const editor = requireEditor(deps);
    const w = checkWriteBody(await jsonBody(c, writeBodySchema));
    const sha256 = await underLock(
      deps.gates,
      server,
      req,
      () => editor.write(target, path, w.content, w, c.req.raw.signal),
      (err) => deps.logger.warn({ err, server }, 'lock release failed'),
    );
    audit(deps.logger, c.get('requestId'), 'file.write', server, path);
    return sendJson(c, 200, { path, status: 'written', sha256 });
  });
};
