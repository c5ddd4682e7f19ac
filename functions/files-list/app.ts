/** `GET /api/v1/servers/:name/files?path=` — one folder's entries. No lock. */
import { sendJson } from '../../lib/http/envelope.ts';
import { defineFunction } from '../../lib/http/routes/register.ts';
import { openViaSession } from '../../lib/http/via-session.ts';
import { decodeList } from '../../lib/files/decode.ts';

export const filesList = defineFunction('files-list', (deps) => ({
  'files.list': async (c) => {
    // A browse session answers as the one-shot Job would, only sooner; without one, the Job runs.
    const { call: f, result: l } = await openViaSession(c, deps, 'list', decodeList, (f) => f.editor.list(f.target, f.path, f.signal));
    // free_bytes: 0 on a full volume, null when the Job could not tell.
    return sendJson(c, 200, { path: f.path, entries: l.entries, truncated: l.truncated, free_bytes: l.free < 0 ? null : l.free });
  },
}));
