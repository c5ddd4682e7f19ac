/**
 * `GET /api/v1/servers/:name/files/ops?limit=&after=` — the server's background ops, newest first, a
 * page at a time, with progress and how each ended; `GET …/files/ops/:id` — one of them (the 202
 * that started it names it in `Location`). Only the server must exist: they work while the server
 * runs or has no world volume, and take no lock.
 */
import type { Context } from 'hono';
import { DomainError } from '../../lib/errors.ts';
import type { Deps } from '../../lib/http/deps.ts';
import { sendJson } from '../../lib/http/envelope.ts';
import { requireEditor } from '../../lib/http/file-call.ts';
import { serverName } from '../../lib/http/file-request.ts';
import { defineFunction } from '../../lib/http/routes/register.ts';
import { ServerNotFoundError } from '../../lib/maintenance/errors.ts';
import { OP_ID_SHAPE } from '../../lib/protocol/ops-page.ts';

async function knownServer(c: Context, deps: Deps): Promise<string> {
  const server = serverName(c);
  if (!(await deps.servers.getServer(deps.lock.namespace, server))) throw new ServerNotFoundError(server);
  return server;
}

export const filesOps = defineFunction('files-ops', (deps) => ({
  'files.ops': async (c, input) => {
    const { limit, after } = input.query();
    const server = await knownServer(c, deps);
    const editor = requireEditor(deps);
    return sendJson(c, 200, await editor.ops(server, { ...(limit !== undefined ? { limit: Number(limit) } : {}), ...(after ? { after } : {}) }));
  },
  'files.op': async (c) => {
    const id = c.req.param('id') ?? '';
    // Its shape before any call: it goes into a label selector.
    if (!OP_ID_SHAPE.test(id))
      throw new DomainError('bad_request', 'invalid', `the op id must be an \`id\` of the ops listing (letters, digits, '-', '_' or '.', at most 63); got ${JSON.stringify(id.slice(0, 80))}`);
    const server = await knownServer(c, deps);
    const editor = requireEditor(deps);
    return sendJson(c, 200, { op: await editor.op(server, id) });
  },
}));
