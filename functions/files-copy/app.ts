/**
 * `POST /api/v1/servers/:name/files/copy?path=<file or folder>` body `{to?}` — copy a file or a
 * folder, to `to` or beside it as `<name> copy<.ext>`. It writes to the world, so it holds it as a
 * write does: the world lock around the Job. A regular file up to 64 MiB (FELIS_COPY_SYNC_MAX_BYTES)
 * is copied while the caller waits: 200 `{path, to, status:"copied", sha256}`; anything else runs as
 * a background op: 202 `{op}`, followed in `files/ops`.
 *
 * Sync or background is decided by the Job, not guessed here: the function first runs the sync
 * copy Job with `--max-size`, which copies a small regular file at once and refuses anything else
 * (too_large) before writing a byte; only then is the background op started. A small file costs
 * one Job, the common case. A folder or big file costs one short refused Job before a long op,
 * unless the copy goes beside its source (no `to`, as a panel's "duplicate" does) and a browse
 * session already serves the world: then one call to its Pod (no Job; none is started for it)
 * shows a folder or a big regular file, and the copy goes straight to the background
 * (known-kind.ts). Starting a session just to ask would cost the Job it saves. With `to` the sync
 * Job always runs first: it judges the destination, and its refusals are the caller's answer.
 */

import { posix } from 'node:path';
import { DomainError } from '../../lib/errors.ts';
import { FileEditError } from '../../lib/files/errors.ts';
import { audit } from '../../lib/http/audit.ts';
import type { Deps } from '../../lib/http/deps.ts';
import { sendJson } from '../../lib/http/envelope.ts';
import type { FileCall } from '../../lib/http/file-call.ts';
import { openFileCall, underWorldLock } from '../../lib/http/file-call.ts';
import { checkNewPath } from '../../lib/http/file-request.ts';
import { sendOpAccepted } from '../../lib/http/op-accepted.ts';
import { defineFunction } from '../../lib/http/routes/register.ts';
import { PAGE_MAX_ENTRIES } from '../../lib/protocol/op-query.ts';
import { pathNamesWorkingFile } from '../../lib/protocol/working-names.ts';
import { IS_ROOT, pathRefusal } from '../../lib/protocol/world-path.ts';
import { backgroundFromListing, sourceAt } from './known-kind.ts';

/** `to` must name a new path inside the world, by the path and name rules: refused here before any Job when it plainly cannot. */
function checkTo(sent: string): string {
  const to = checkNewPath(sent);
  const bad = (why: string) => new DomainError('bad_path', 'invalid', pathRefusal(sent, why));
  const n = posix.normalize(to);
  if (n === '.' || n === './') throw bad(`of to ${IS_ROOT}`);
  if (pathNamesWorkingFile(n)) throw bad("of to names one of the editor's working files");
  return to;
}

/** True when a serving browse session shows the source is a folder or a big regular file; never starts one. */
async function knownBackground(deps: Deps, f: FileCall): Promise<boolean> {
  const at = sourceAt(f.path);
  if (!at || !deps.browse) return false;
  const payload = await deps.browse.run(f.target, 'list', at.folder, f.signal, undefined, { q: at.name, limit: PAGE_MAX_ENTRIES }, { start: false }).catch(() => undefined);
  return payload !== undefined && backgroundFromListing(payload, at.name, f.editor.copySyncMaxBytes);
}

export const filesCopy = defineFunction('files-copy', (deps) => ({
  'files.copy': async (c, input) => {
    const f = await openFileCall(c, deps, 'copy');
    const body = await input.body();
    const to = body.to === undefined ? undefined : checkTo(body.to);
    const req = { op: 'copy' as const, path: f.path, ...(to !== undefined ? { to } : {}) };
    const say = (extra: Record<string, unknown>) => audit(deps.logger, c.get('requestId'), 'file.copy', f.target.server, f.path, { ...(to !== undefined ? { to } : {}), ...extra });
    // A redelivered event whose first delivery went to the background answers that op again.
    const earlier = await f.editor.earlierOp(f.target.server, req);
    if (earlier) return sendOpAccepted(c, f.target.server, earlier.id, { op: earlier });
    // With `to`, the sync Job is also where the destination is judged (an existing `to`, a missing
    // folder: the caller's 409/404 at once, not a failed op later), so it always runs first then.
    if (to !== undefined || !(await knownBackground(deps, f))) {
      try {
        const done = await underWorldLock(deps, f, () => f.editor.copy(f.target, f.path, to, f.signal));
        say({ to: done.to });
        return sendJson(c, 200, { path: f.path, to: done.to, status: 'copied', sha256: done.sha256 });
      } catch (err) {
        // Not a small regular file: nothing was written; it goes to the background.
        if (!(err instanceof FileEditError && err.kind === 'too_large')) throw err;
      }
    }
    const op = await underWorldLock(deps, f, () => f.editor.start(f.target, req));
    say({ op: op.id });
    return sendOpAccepted(c, f.target.server, op.id, { op });
  },
}));
