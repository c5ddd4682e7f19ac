/** `POST /api/v1/servers/:name/files/rename?path=` body `{to}` — move without replacing, under the world lock. */

import { DomainError } from '../../lib/errors.ts';
import { audit } from '../../lib/http/audit.ts';
import { sendJson } from '../../lib/http/envelope.ts';
import { openFileCall, underWorldLock } from '../../lib/http/file-call.ts';
import { checkNewPath } from '../../lib/http/file-request.ts';
import { defineFunction } from '../../lib/http/routes/register.ts';

export const filesRename = defineFunction('files-rename', (deps) => ({
  'files.rename': async (c, input) => {
    const f = await openFileCall(c, deps, 'rename');
    const body = await input.body();
    if (!body.to) throw new DomainError('bad_request', 'invalid', 'the to field is required');
    const to = checkNewPath(body.to);
    await underWorldLock(deps, f, () => f.editor.rename(f.target, f.path, to, f.signal));
    audit(deps.logger, c.get('requestId'), 'file.rename', f.target.server, f.path, { to });
    return sendJson(c, 200, { path: f.path, to, status: 'renamed' });
  },
}));
