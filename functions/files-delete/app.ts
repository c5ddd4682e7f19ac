/** `DELETE /api/v1/servers/:name/file?path=` — a file, or a folder recursively, under the world lock. */
import { audit } from '../../lib/http/audit.ts';
import { sendJson } from '../../lib/http/envelope.ts';
import { openFileCall, underWorldLock } from '../../lib/http/file-call.ts';
import { defineFunction } from '../../lib/http/routes/register.ts';

export const filesDelete = defineFunction('files-delete', (deps) => ({
  'files.delete': async (c) => {
    const f = await openFileCall(c, deps, 'delete');
    await underWorldLock(deps, f, () => f.editor.delete(f.target, f.path, f.signal));
    audit(deps.logger, c.get('requestId'), 'file.delete', f.target.server, f.path);
    return sendJson(c, 200, { path: f.path, status: 'deleted' });
  },
}));
