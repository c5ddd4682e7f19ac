/**
 * `POST /api/v1/servers/:name/files/compress` body `{paths, format, name?}` — pack a selection of
 * files and folders that share one folder into one archive in that folder, in the background:
 * `name`, or `archive-<UTC yyyy-mm-ddThhmmss>.<ending>` named now (the request's time). The
 * selection and the name are judged here before any Job (lib/files/pack-names.ts), then again by
 * the Job with the world in front of it. It writes to the world, so it holds it as zip does: the
 * world lock around the Job's creation, then the Job. Answers 202 `{op}` (op `compress`, path the
 * folder); audited as `file.compress`.
 * @module
 */
import { checkArchiveName, defaultArchiveName, selectionOf } from '../../lib/files/pack-names.ts';
import { audit } from '../../lib/http/audit.ts';
import { openBatchCall, underWorldLock } from '../../lib/http/file-call.ts';
import { checkItemPath } from '../../lib/http/file-request.ts';
import { sendOpAccepted } from '../../lib/http/op-accepted.ts';
import { defineFunction } from '../../lib/http/routes/register.ts';
import { BatchTooLargeError } from '../../lib/job-spec/render.ts';
import { fitsOneJob } from '../../lib/protocol/batch-env.ts';

export const filesCompress = defineFunction('files-compress', (deps) => ({
  'files.compress': async (c, input) => {
    const f = await openBatchCall(c, deps, 'compress');
    const { paths, format, name } = await input.body();
    for (const p of paths) checkItemPath(p);
    const sel = selectionOf(paths);
    const archive = name !== undefined ? checkArchiveName(name, format) : defaultArchiveName(format, new Date());
    const batch = { paths: sel.names };
    if (!fitsOneJob(batch)) throw new BatchTooLargeError();
    const req = { op: 'compress' as const, path: sel.folder, batch, format, to: archive };
    const earlier = await f.editor.earlierOp(f.target.server, req);
    if (earlier) return sendOpAccepted(c, f.target.server, earlier.id, { op: earlier });
    const op = await underWorldLock(deps, f, () => f.editor.start(f.target, req));
    audit(deps.logger, c.get('requestId'), 'file.compress', f.target.server, sel.folder, { paths: sel.names, format, name: archive, op: op.id });
    return sendOpAccepted(c, f.target.server, op.id, { op });
  },
}));
