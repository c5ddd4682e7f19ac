/**
 * `PUT /api/v1/servers/:name/files/upload?path=&overwrite=true&parents=true` — one raw body of at
 * most 64 MiB, placed atomically; `parents=true` first makes the missing folders of `path`, each as
 * mkdir would (a folder upload, file by file). `Content-Length` and `Content-Digest` (sha-256) are required and checked
 * before any lock or Job; then the world lock (`file-write`) is held while one receiver Job takes
 * the body, streamed to it as it arrives, checks its size and digest, and renames it into place.
 * Answers `{path, status:"uploaded", sha256, size}`.
 */

import { DomainError } from '../../lib/errors.ts';
import { audit } from '../../lib/http/audit.ts';
import { contentDigestValues, parseContentDigest } from '../../lib/http/content-digest.ts';
import { sendJson } from '../../lib/http/envelope.ts';
import { openFileCall, underWorldLock } from '../../lib/http/file-call.ts';
import { defineFunction } from '../../lib/http/routes/register.ts';
import { checkLocalPath, declaredLength } from '../../lib/http/upload-request.ts';
import { RunnerError } from '../../lib/runner/errors.ts';
import { uploadBody } from '../../lib/uploads/receiver.ts';

/** The most one request may carry; larger files go through upload sessions. */
export const MAX_SINGLE_UPLOAD = 64 << 20;

export const filesUpload = defineFunction('files-upload', (deps) => ({
  'files.upload': async (c, input) => {
    const f = await openFileCall(c, deps, 'upload');
    if (!deps.uploads) throw new DomainError('files_unavailable', 'unavailable', 'uploads are not configured');
    // What can be judged without the disk is refused before any lock or Job.
    checkLocalPath(f.path);
    const size = declaredLength(c.req.raw.headers);
    if (size > MAX_SINGLE_UPLOAD) {
      throw new DomainError('too_large', 'too_large', `a single upload carries at most ${MAX_SINGLE_UPLOAD} bytes; send larger files through an upload session (POST .../files/uploads)`);
    }
    const sha256 = parseContentDigest(contentDigestValues(c.req.raw.headers)).toString('hex');
    const { overwrite, parents } = input.query();
    const uploads = deps.uploads;
    const placed = await underWorldLock(deps, f, () => uploads.single(f.target, { path: f.path, size, sha256, overwrite, ...(parents ? { parents } : {}) }, uploadBody(c), f.signal));
    // The receiver took exactly the bytes sent; what it placed differs only where server.properties
    // kept the values a read showed redacted, and then the answer hashes what is on disk.
    if ((placed.sent ?? placed.sha256) !== sha256) throw new RunnerError(`the receiver took ${placed.sent ?? placed.sha256}, not ${sha256}`);
    audit(deps.logger, c.get('requestId'), 'file.upload', f.target.server, f.path, { overwrite, ...(parents ? { parents } : {}), sha256: placed.sha256, size_bytes: size });
    return sendJson(c, 200, { path: f.path, status: 'uploaded', sha256: placed.sha256, size });
  },
}));
