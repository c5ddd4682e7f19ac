/**
 * `POST /api/v1/servers/:name/files/unzip?path=<archive>` body `{overwrite?, to?}` — extract an
 * archive in the background. The world lock is held only around the Job's creation; the running
 * Job then holds the world. Answers 202 `{op}`: follow it in `GET .../files/ops`.
 */

import { DomainError } from '../../lib/errors.ts';
import { requireArchivePath } from '../../lib/files/archive-names.ts';
import { audit } from '../../lib/http/audit.ts';
import { openFileCall, underWorldLock } from '../../lib/http/file-call.ts';
import { checkPath } from '../../lib/http/file-request.ts';
import { sendOpAccepted } from '../../lib/http/op-accepted.ts';
import { defineFunction } from '../../lib/http/routes/register.ts';

export const filesUnzip = defineFunction('files-unzip', (deps) => ({
  'files.unzip': async (c, input) => {
    const f = await openFileCall(c, deps, 'unzip');
    requireArchivePath(f.path);
    const body = await input.body();
    const overwrite = body.overwrite ?? false;
    if (body.to !== undefined) {
      if (body.to === '') throw new DomainError('bad_request', 'invalid', 'invalid request: to: leave it out to extract next to the archive, or name a folder');
    }
    // `/` is the world folder: `.`, since an empty `to` would mean the archive's own folder.
    const to = body.to === undefined ? undefined : checkPath(body.to) || '.';
    const req = { op: 'unzip' as const, path: f.path, overwrite, ...(to !== undefined ? { to } : {}) };
    // A redelivered event answers the op its first delivery started, which now holds the world.
    const earlier = await f.editor.earlierOp(f.target.server, req);
    if (earlier) return sendOpAccepted(c, f.target.server, earlier.id, { op: earlier });
    const op = await underWorldLock(deps, f, () => f.editor.start(f.target, req));
    audit(deps.logger, c.get('requestId'), 'file.unzip', f.target.server, f.path, { overwrite, ...(req.to !== undefined ? { to: req.to } : {}), op: op.id });
    return sendOpAccepted(c, f.target.server, op.id, { op });
  },
}));
