/** `DELETE /api/v1/servers/:name/file?path=` — a file, or a folder recursively, under the world lock; `trash_id` names the undo-trash record that keeps it. */
import { audit } from '../../lib/http/audit.ts';
import { sendJson } from '../../lib/http/envelope.ts';
import { openFileCall, underWorldLock } from '../../lib/http/file-call.ts';
import { defineFunction } from '../../lib/http/routes/register.ts';

export const filesDelete = defineFunction('files-delete', (deps) => ({
  'files.delete': async (c) => {
    const f = await openFileCall(c, deps, 'delete');
    const out = await underWorldLock(deps, f, () => f.editor.delete(f.target, f.path, f.signal));
    // The undo trash keeps what was deleted (unless the operator turned it off): its record, to undo it.
    const trash = out?.trashId ? { trash_id: out.trashId } : {};
    audit(deps.logger, c.get('requestId'), 'file.delete', f.target.server, f.path, out?.trashId ? trash : undefined);
    return sendJson(c, 200, { path: f.path, status: 'deleted', ...trash });
  },
}));
