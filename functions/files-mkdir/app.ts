/**
 * `POST /api/v1/servers/:name/files/mkdir?path=&parents=true` — one new folder (its path by the name
 * rule), under the world lock; with `parents=true` the missing folders above it first, each made
 * the same way, and a folder already there is no error (mkdir -p).
 */
import { audit } from '../../lib/http/audit.ts';
import { sendJson } from '../../lib/http/envelope.ts';
import { openFileCall, underWorldLock } from '../../lib/http/file-call.ts';
import { checkNewPath } from '../../lib/http/file-request.ts';
import { defineFunction } from '../../lib/http/routes/register.ts';

export const filesMkdir = defineFunction('files-mkdir', (deps) => ({
  'files.mkdir': async (c, input) => {
    const f = await openFileCall(c, deps, 'mkdir');
    checkNewPath(f.path);
    const { parents } = input.query();
    await underWorldLock(deps, f, () => f.editor.mkdir(f.target, f.path, f.signal, { parents }));
    audit(deps.logger, c.get('requestId'), 'file.mkdir', f.target.server, f.path, parents ? { parents } : undefined);
    return sendJson(c, 200, { path: f.path, status: 'created' });
  },
}));
