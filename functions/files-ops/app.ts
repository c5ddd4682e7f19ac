/**
 * `GET /api/v1/servers/:name/files/ops` — the server's background ops, newest first, at most ten,
 * with progress and how each ended. Only the server must exist: it works while the server runs
 * or has no world volume, and takes no lock.
 */
import { sendJson } from '../../lib/http/envelope.ts';
import { requireEditor } from '../../lib/http/file-call.ts';
import { serverName } from '../../lib/http/file-request.ts';
import { defineFunction } from '../../lib/http/routes/register.ts';
import { ServerNotFoundError } from '../../lib/maintenance/errors.ts';

export const filesOps = defineFunction('files-ops', (deps) => ({
  'files.ops': async (c) => {
    const server = serverName(c);
    if (!(await deps.servers.getServer(deps.lock.namespace, server))) throw new ServerNotFoundError(server);
    const editor = requireEditor(deps);
    return sendJson(c, 200, { ops: await editor.ops(server) });
  },
}));
