/** `GET /api/v1/servers/:name/file?path=` — a file's bytes, base64. No lock. */

import { sendJson } from '../../lib/http/envelope.ts';
import { defineFunction } from '../../lib/http/routes/register.ts';
import { openViaSession } from '../../lib/http/via-session.ts';
import { decodeRead } from './result.ts';

export const filesRead = defineFunction('files-read', (deps) => ({
  'files.read': async (c) => {
    // A browse session answers as the one-shot Job would, only sooner; without one, the Job runs.
    const { call: f, result: r } = await openViaSession(c, deps, 'read', decodeRead, (f) => f.editor.read(f.target, f.path, f.signal));
    // sha256 is of the bytes on disk (send it back as expect_sha256); content_sha256 of what is sent.
    return sendJson(c, 200, { path: f.path, content: r.content.toString('base64'), sha256: r.sha256, content_sha256: r.contentSha256 });
  },
}));
