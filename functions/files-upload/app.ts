/**
 * `PUT /api/v1/servers/:name/files/upload?path=&overwrite=true` — one raw body of at most 64 MiB,
 * placed atomically. `Content-Length` and `Content-Digest` (sha-256) are required and checked
 * before any lock or Job; then the world lock (`file-write`) is held while one receiver Job takes
 * the body, streamed to it as it arrives, checks its size and digest, and renames it into place.
 * Answers `{path, status:"uploaded", sha256, size}`.
 */
import type { Hono } from 'hono';
import type { Env } from '../../lib/http/app.ts';
import { audit } from '../../lib/http/audit.ts';
import { contentDigestValues, parseContentDigest } from '../../lib/http/content-digest.ts';
import { ApiError, sendJson } from '../../lib/http/envelope.ts';
import { openFileCall, underWorldLock } from '../../lib/http/file-call.ts';
import { rawQueryParam } from '../../lib/http/file-request.ts';
import type { Deps } from '../../lib/http/deps.ts';
import { RunnerError } from '../../lib/runner/errors.ts';
import { uploadBody } from '../../lib/uploads/receiver.ts';
import { checkLocalPath } from '../files-uploads/app.ts';

/** The most one request may carry; larger files go through upload sessions. */
export const MAX_SINGLE_UPLOAD = 64 << 20;

/** `Content-Length` as a byte count: 411 when absent (a chunked body), 400 when not a number. */
export function declaredLength(headers: Headers): number {
  const v = headers.get('content-length');
  if (v === null) throw new ApiError(411, 'length_required', 'a Content-Length header is required; send the file in one request of known length');
  if (!/^\d{1,16}$/.test(v)) throw new ApiError(400, 'bad_request', 'the Content-Length header is not a byte count');
  return Number(v);
}

export const filesUpload = (deps: Deps) => (app: Hono<Env>) => {
  app.put('/api/v1/servers/:name/files/upload', async (c) => {
    const f = await openFileCall(c, deps, 'upload');
    if (!deps.uploads) throw new ApiError(503, 'files_unavailable', 'uploads are not configured');
    // What can be judged without the disk is refused before any lock or Job.
    checkLocalPath(f.path);
    const size = declaredLength(c.req.raw.headers);
    if (size > MAX_SINGLE_UPLOAD) {
      throw new ApiError(413, 'too_large', `a single upload carries at most ${MAX_SINGLE_UPLOAD} bytes; send larger files through an upload session (POST .../files/uploads)`);
    }
    const sha256 = parseContentDigest(contentDigestValues(c.req.raw.headers)).toString('hex');
    const overwrite = rawQueryParam(c.req.url, 'overwrite') === 'true';
    const uploads = deps.uploads;
    const placed = await underWorldLock(deps, f, () => uploads.single(f.target, { path: f.path, size, sha256, overwrite }, uploadBody(c), f.signal));
    if (placed.sha256 !== sha256) throw new RunnerError(`the receiver placed ${placed.sha256}, not ${sha256}`);
    audit(deps.logger, c.get('requestId'), 'file.upload', f.target.server, f.path, { overwrite, sha256, size_bytes: size });
    return sendJson(c, 200, { path: f.path, status: 'uploaded', sha256, size });
  });
};
