/**
 * Uploads of one request (docs/uploads.md):
 *
 * - `PUT /api/v1/servers/:name/files/upload?path=&overwrite=true&parents=true` — one raw body of at
 *   most 64 MiB, placed atomically; `parents=true` first makes the missing folders of `path`, each
 *   as mkdir would (a folder upload, file by file). `Content-Length` and `Content-Digest` (sha-256)
 *   are required and checked before any lock or Job; then the world lock (`file-write`) is held
 *   while one receiver Job takes the body, streamed to it as it arrives, checks its size and
 *   digest, and renames it into place. Answers `{path, status:"uploaded", sha256, size}`.
 * - `POST .../files/upload-url?path=&overwrite=true&parents=true` (bearer, `update files`): the
 *   gates, then a signed, expiring, single-use URL a browser uses without a bearer header
 *   (lib/uploads/url-tickets.ts). Nothing is stored and no Job starts yet.
 * - `PUT /api/v1/uploads/:ticket` (the signature is the credential): as the single PUT into the
 *   ticket's file, `Content-Digest` optional. `POST` the same URL: a `multipart/form-data` body
 *   whose `files` parts land in the ticket's folder, each as an upload does. Either acts, and is
 *   audited, as the ticket's signer; the receiver Job's name is the ticket's, so a second use is
 *   410 `upload_url_used`.
 */

import { actorOf, asActor, BEARER, currentActor } from '../../lib/actor.ts';
import { DomainError, domainError } from '../../lib/errors.ts';
import { audit } from '../../lib/http/audit.ts';
import { contentDigestValues, parseContentDigest } from '../../lib/http/content-digest.ts';
import type { Deps } from '../../lib/http/deps.ts';
import { sendJson } from '../../lib/http/envelope.ts';
import { openFileCall, openSignedCall, requireEditor, underWorldLock } from '../../lib/http/file-call.ts';
import { queryPath, serverName } from '../../lib/http/file-request.ts';
import { defineFunction } from '../../lib/http/routes/register.ts';
import { ROUTES } from '../../lib/http/routes/table.ts';
import { checkLocalPath, declaredLength } from '../../lib/http/upload-request.ts';
import { isRootPath } from '../../lib/protocol/world-path.ts';
import { RunnerError } from '../../lib/runner/errors.ts';
import { type UploadChannel, uploadBody } from '../../lib/uploads/receiver.ts';
import { claimKeepSeconds, claimOpId, type UploadClaims, type UploadUrls } from '../../lib/uploads/url-tickets.ts';

/** The most one request may carry; larger files go through upload sessions. */
export const MAX_SINGLE_UPLOAD = 64 << 20;

/** The signed URL's path, before its ticket. */
const UPLOAD_URL_PREFIX = ROUTES['uploads.put'].path.replace('/:ticket', '/');

function requireUploads(deps: Deps): UploadChannel {
  if (!deps.uploads) throw new DomainError('files_unavailable', 'unavailable', 'uploads are not configured');
  return deps.uploads;
}

function requireUploadUrls(deps: Deps): UploadUrls {
  if (!deps.uploadUrls) throw new DomainError('files_unavailable', 'unavailable', 'uploads are not configured');
  return deps.uploadUrls;
}

/** `Content-Length`, at most MAX_SINGLE_UPLOAD. */
function boundedLength(headers: Headers): number {
  const size = declaredLength(headers);
  if (size > MAX_SINGLE_UPLOAD) {
    throw new DomainError('too_large', 'too_large', `a single upload carries at most ${MAX_SINGLE_UPLOAD} bytes; send larger files through an upload session (POST .../files/uploads)`);
  }
  return size;
}

/** A ticket's use: the lock held for its path while the receiver Job named from it works. */
function ticketClaim(urls: UploadUrls, claims: UploadClaims) {
  return { opId: claimOpId(claims.nonce), keepSeconds: claimKeepSeconds(claims.expires, urls.nowSeconds()) };
}

const ISO_SECONDS = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

export const filesUpload = defineFunction('files-upload', (deps) => ({
  'files.upload': async (c, input) => {
    const f = await openFileCall(c, deps, 'upload');
    const uploads = requireUploads(deps);
    // What can be judged without the disk is refused before any lock or Job.
    checkLocalPath(f.path);
    const size = boundedLength(c.req.raw.headers);
    const sha256 = parseContentDigest(contentDigestValues(c.req.raw.headers)).toString('hex');
    const { overwrite, parents } = input.query();
    const placed = await underWorldLock(deps, f, () => uploads.single(f.target, { path: f.path, size, sha256, overwrite, ...(parents ? { parents } : {}) }, uploadBody(c), f.signal));
    // The receiver took exactly the bytes sent; what it placed differs only where server.properties
    // kept the values a read showed redacted, and then the answer hashes what is on disk.
    if ((placed.sent ?? placed.sha256) !== sha256) throw new RunnerError(`the receiver took ${placed.sent ?? placed.sha256}, not ${sha256}`);
    audit(deps.logger, c.get('requestId'), 'file.upload', f.target.server, f.path, { overwrite, ...(parents ? { parents } : {}), sha256: placed.sha256, size_bytes: size });
    return sendJson(c, 200, { path: f.path, status: 'uploaded', sha256: placed.sha256, size });
  },

  'files.upload_url': async (c, input) => {
    const server = serverName(c);
    const sent = queryPath(c, true);
    await deps.gates.enter(server, { op: 'upload', path: sent });
    requireEditor(deps);
    const urls = requireUploadUrls(deps);
    // A file (PUT) or a folder (POST), the root included for a form (a PUT there is refused at
    // its use); a path below the root by the upload's rule, as the ticket will carry it.
    const path = isRootPath(sent) ? '' : checkLocalPath(sent);
    const { overwrite, parents } = input.query();
    const { ticket, expiresAt } = urls.sign({ server, path, overwrite, parents, signer: (currentActor() ?? BEARER).name });
    const expires_at = ISO_SECONDS(expiresAt);
    audit(deps.logger, c.get('requestId'), 'file.upload_url', server, path, { overwrite, ...(parents ? { parents } : {}), expires_at });
    return sendJson(c, 200, { url: `${urls.config.baseUrl ?? ''}${UPLOAD_URL_PREFIX}${ticket}`, expires_at, max_bytes: MAX_SINGLE_UPLOAD });
  },

  'uploads.put': async (c) => {
    const urls = requireUploadUrls(deps);
    const claims = urls.verify(c.req.param('ticket') ?? '');
    // No bearer here: the upload acts for whoever signed its URL (the undo trash records them too).
    return asActor(actorOf(claims.signer), async () => {
      // Signed as the rule gives it; checked again, as the ticket is all this request has.
      checkLocalPath(claims.path);
      const size = boundedLength(c.req.raw.headers);
      // A browser's fetch cannot cheaply hash a large file: the digest is checked only when given.
      const digests = contentDigestValues(c.req.raw.headers);
      const sha256 = digests.length > 0 ? parseContentDigest(digests).toString('hex') : undefined;
      const f = await openSignedCall(c, deps, claims.server, claims.path);
      const uploads = requireUploads(deps);
      const { overwrite, parents } = claims;
      const placed = await underWorldLock(deps, f, () =>
        uploads.single(f.target, { path: f.path, size, ...(sha256 ? { sha256 } : {}), overwrite, ...(parents ? { parents } : {}) }, uploadBody(c), f.signal, ticketClaim(urls, claims)),
      );
      if (sha256 && (placed.sent ?? placed.sha256) !== sha256) throw new RunnerError(`the receiver took ${placed.sent ?? placed.sha256}, not ${sha256}`);
      audit(deps.logger, c.get('requestId'), 'file.upload', claims.server, claims.path, { overwrite, ...(parents ? { parents } : {}), sha256: placed.sha256, size_bytes: size, via: 'upload_url' });
      return sendJson(c, 200, { path: claims.path, status: 'uploaded', sha256: placed.sha256, size });
    });
  },

  'uploads.post': async (c) => {
    const urls = requireUploadUrls(deps);
    const claims = urls.verify(c.req.param('ticket') ?? '');
    return asActor(actorOf(claims.signer), async () => {
      if (!isRootPath(claims.path)) checkLocalPath(claims.path);
      const contentType = c.req.header('content-type') ?? '';
      if (!/^multipart\/form-data\s*;/i.test(contentType)) {
        throw domainError('bad_request', 'POST a multipart/form-data body with a part named files for each file, or PUT the raw bytes of one file');
      }
      const size = boundedLength(c.req.raw.headers);
      const f = await openSignedCall(c, deps, claims.server, claims.path);
      const uploads = requireUploads(deps);
      const { overwrite, parents } = claims;
      const placed = await underWorldLock(deps, f, () =>
        uploads.form(f.target, { path: f.path, size, contentType, overwrite, ...(parents ? { parents } : {}) }, uploadBody(c), f.signal, ticketClaim(urls, claims)),
      );
      // Each file placed is an upload of its own, audited as such, those before a refusal too.
      for (const p of placed.files)
        audit(deps.logger, c.get('requestId'), 'file.upload', claims.server, p.path, { overwrite, ...(parents ? { parents } : {}), sha256: p.sha256, size_bytes: p.size, via: 'upload_url' });
      if (placed.refusal) throw placed.refusal;
      return sendJson(c, 200, { path: claims.path, status: 'uploaded', files: placed.files });
    });
  },
}));
