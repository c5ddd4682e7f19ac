/**
 * `GET /api/v1/servers/:name/file?path=&decompress=` — a file's bytes, base64; with
 * `decompress=true`, a gzip file's text (up to the read limit, `truncated` past it). No lock.
 */

import { sendJson } from '../../lib/http/envelope.ts';
import { openFileCall } from '../../lib/http/file-call.ts';
import { defineFunction } from '../../lib/http/routes/register.ts';
import { openViaSession } from '../../lib/http/via-session.ts';
import { decodeRead, type ReadFile } from './result.ts';

export const filesRead = defineFunction('files-read', (deps) => ({
  'files.read': async (c) => {
    // Read as its schema reads it (onlyTrue), but not through the whole query's parse: the gates
    // answer before a missing path does.
    const decompress = c.req.query('decompress') === 'true';
    let f;
    let r: ReadFile;
    if (decompress) {
      // Always a one-shot Job: a browse Pod serves plain reads only, and opening an old log is
      // rare beside browsing, so its Job's start is paid where it is asked for.
      f = await openFileCall(c, deps, 'read');
      r = decodeRead(await f.editor.run(f.target, 'read', f.path, { decompress: true }, f.signal));
    } else {
      // A browse session answers as the one-shot Job would, only sooner; without one, the Job runs.
      ({ call: f, result: r } = await openViaSession(c, deps, 'read', decodeRead, (f) => f.editor.read(f.target, f.path, f.signal)));
    }
    // sha256 is of the bytes on disk (send it back as expect_sha256); content_sha256 of what is sent.
    // `truncated` only where it can be true: a plain read over the limit is too_large instead.
    const truncated = decompress ? { truncated: r.truncated === true } : {};
    return sendJson(c, 200, { path: f.path, content: r.content.toString('base64'), sha256: r.sha256, content_sha256: r.contentSha256, ...truncated });
  },
}));
