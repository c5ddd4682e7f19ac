/**
 * `POST /api/v1/servers/:name/files/zip?path=<file or folder>` body `{name?}` — pack into a `.zip`
 * next to it, in the background: a free name (`world.zip`, `world (2).zip`, …) unless `name` is
 * given. It writes to the world, so it holds it like a write: the world lock around the Job's
 * creation, then the Job. Answers 202 `{op}`.
 */
import { checkZipName } from '../../lib/files/archive-names.ts';
import { audit } from '../../lib/http/audit.ts';
import { openFileCall, underWorldLock } from '../../lib/http/file-call.ts';
import { sendOpAccepted } from '../../lib/http/op-accepted.ts';
import { defineFunction } from '../../lib/http/routes/register.ts';

export const filesZip = defineFunction('files-zip', (deps) => ({
  'files.zip': async (c, input) => {
    const f = await openFileCall(c, deps, 'zip');
    const { name } = await input.body();
    if (name !== undefined) checkZipName(name);
    const req = { op: 'zip' as const, path: f.path, ...(name !== undefined ? { to: name } : {}) };
    const earlier = await f.editor.earlierOp(f.target.server, req);
    if (earlier) return sendOpAccepted(c, f.target.server, earlier.id, { op: earlier });
    const op = await underWorldLock(deps, f, () => f.editor.start(f.target, req));
    audit(deps.logger, c.get('requestId'), 'file.zip', f.target.server, f.path, { ...(name !== undefined ? { name } : {}), op: op.id });
    return sendOpAccepted(c, f.target.server, op.id, { op });
  },
}));
