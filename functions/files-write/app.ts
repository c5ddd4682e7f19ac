/** `PUT /api/v1/servers/:name/file?path=` — replace or create a file, atomically, under the world lock. */
import { audit } from '../../lib/http/audit.ts';
import { sendJson } from '../../lib/http/envelope.ts';
import { openFileCall, underWorldLock } from '../../lib/http/file-call.ts';
import { jsonBody } from '../../lib/http/file-request.ts';
import { defineFunction } from '../../lib/http/routes/register.ts';
import { checkWriteBody, MAX_WRITE_BODY_BYTES } from '../../lib/http/write-body.ts';
import { schemas } from './schemas.ts';

export const filesWrite = defineFunction('files-write', (deps) => ({
  'files.write': async (c) => {
    const f = await openFileCall(c, deps, 'write');
    // Read here, not through the route's input: a 1 MiB write's JSON is over the routes' 1 MiB.
    const w = checkWriteBody(await jsonBody(c, schemas['files.write'].body.json, MAX_WRITE_BODY_BYTES), f.editor.streamsWrites ? 'streamed' : 'env');
    const sha256 = await underWorldLock(deps, f, () => f.editor.write(f.target, f.path, w.content, w, f.signal));
    audit(deps.logger, c.get('requestId'), 'file.write', f.target.server, f.path);
    return sendJson(c, 200, { path: f.path, status: 'written', sha256 });
  },
}));
