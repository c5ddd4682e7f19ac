/** `PUT /api/v1/servers/:name/file?path=` — replace or create a file, atomically, under the world lock. */
import { audit } from '../../lib/http/audit.ts';
import { sendJson } from '../../lib/http/envelope.ts';
import { openFileCall, underWorldLock } from '../../lib/http/file-call.ts';
import { defineFunction } from '../../lib/http/routes/register.ts';
import { checkWriteBody } from '../../lib/http/write-body.ts';

export const filesWrite = defineFunction('files-write', (deps) => ({
  'files.write': async (c, input) => {
    const f = await openFileCall(c, deps, 'write');
    const w = checkWriteBody(await input.body());
    const sha256 = await underWorldLock(deps, f, () => f.editor.write(f.target, f.path, w.content, w, f.signal));
    audit(deps.logger, c.get('requestId'), 'file.write', f.target.server, f.path);
    return sendJson(c, 200, { path: f.path, status: 'written', sha256 });
  },
}));
