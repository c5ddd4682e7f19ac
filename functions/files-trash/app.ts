/**
 * The undo trash (job/trash/), where deletes, overwrites and extractions put what they remove:
 * `GET …/files/trash?limit=&after=` lists its records newest first, a page at a time (a read: no
 * lock, no audit); `POST …/files/trash/:id/restore` `{to?}` puts one back; `DELETE
 * …/files/trash/:id` and `DELETE …/files/trash` remove one or all for good. The three changes run
 * under the world lock and are audited (`file.trash.restore`, `file.trash.purge`, target
 * `<server>:<id>`, or `<server>:*` for everything). Each is one Job on the world's root.
 * @module
 */
import type { Context } from 'hono';
import { DomainError } from '../../lib/errors.ts';
import { audit } from '../../lib/http/audit.ts';
import { sendJson } from '../../lib/http/envelope.ts';
import { openBatchCall, underWorldLock } from '../../lib/http/file-call.ts';
import { checkItemPath } from '../../lib/http/file-request.ts';
import { defineFunction } from '../../lib/http/routes/register.ts';
import type { TrashItem } from '../../lib/protocol/result.ts';
import { TRASH_ID } from '../../lib/protocol/trash-env.ts';

/** The `:id` of the URL: a record id, judged before any Job (after the common front, as every file route's input is). */
function recordId(c: Context): string {
  const id = c.req.param('id') ?? '';
  if (!TRASH_ID.test(id)) throw new DomainError('bad_request', 'invalid', 'the trash record id must be 16 lowercase hex digits (an `id` of the trash listing)');
  return id;
}

/** A record as the listing answers it: exactly these fields, in this order, whatever else the Job says. */
const itemView = (t: TrashItem) => ({ id: t.id, op: t.op, paths: t.paths, bytes: t.bytes, entries: t.entries, at: t.at, actor: t.actor, expires_at: t.expires_at });

export const filesTrash = defineFunction('files-trash', (deps) => ({
  'files.trash.list': async (c, input) => {
    const f = await openBatchCall(c, deps, 'trash-list');
    const { limit, after } = input.query();
    const page = await f.editor.trashList(f.target, { ...(limit !== undefined ? { limit } : {}), ...(after ? { after } : {}) }, f.signal);
    return sendJson(c, 200, { items: page.items.map(itemView), ...(page.next ? { next: page.next } : {}), trash_bytes: page.trashBytes });
  },
  'files.trash.restore': async (c, input) => {
    const f = await openBatchCall(c, deps, 'trash-restore');
    const id = recordId(c);
    const body = await input.body();
    // `/` is the world folder: `.`, since no `to` means where each path was.
    const to = body.to === undefined ? undefined : checkItemPath(body.to) || '.';
    const out = await underWorldLock(deps, f, () => f.editor.trashRestore(f.target, id, to || undefined, f.signal));
    audit(deps.logger, c.get('requestId'), 'file.trash.restore', f.target.server, id, { restored: out.restored, ...(to ? { to } : {}) });
    return sendJson(c, 200, { id, restored: out.restored });
  },
  'files.trash.purge': async (c) => {
    const f = await openBatchCall(c, deps, 'trash-purge');
    const id = recordId(c);
    const out = await underWorldLock(deps, f, () => f.editor.trashPurge(f.target, id, f.signal));
    audit(deps.logger, c.get('requestId'), 'file.trash.purge', f.target.server, id, { purged: out.purged, bytes: out.bytes });
    return sendJson(c, 200, { id, purged: out.purged, bytes: out.bytes });
  },
  'files.trash.purge_all': async (c) => {
    const f = await openBatchCall(c, deps, 'trash-purge');
    const out = await underWorldLock(deps, f, () => f.editor.trashPurge(f.target, undefined, f.signal));
    // Only what happened is audited: an empty trash purged is no event.
    if (out.purged > 0) audit(deps.logger, c.get('requestId'), 'file.trash.purge', f.target.server, '*', { purged: out.purged, bytes: out.bytes });
    return sendJson(c, 200, { purged: out.purged, bytes: out.bytes });
  },
}));
