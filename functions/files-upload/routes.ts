/**
 * files-upload's routes (files.upload; files.upload_url and the signed URL's uploads.put and
 * uploads.post): their table entries and prose (what a declaration holds, and why:
 * lib/http/routes/common-entries.ts).
 * @module
 */
import { filesUpdate, GATES, JOB, MUTATION, RAW_BODY, RECEIVER, routesOf, S } from '../../lib/http/routes/common-entries.ts';
import type { ErrorCode, ProseTable, RouteDeclarations } from '../../lib/http/routes/types.ts';

/** A signed upload URL's refusals of the ticket itself. */
const TICKET: readonly ErrorCode[] = [
  [404, 'not_found'],
  [410, 'upload_url_expired'],
  [410, 'upload_url_used'],
  [503, 'files_unavailable'],
];

export const routes = routesOf('files-upload', {
  'files.upload': {
    method: 'PUT',
    path: `${S}/files/upload`,
    permission: filesUpdate,
    errors: [...GATES, ...JOB, ...MUTATION, ...RAW_BODY, ...RECEIVER],
  },
  'files.upload_url': {
    method: 'POST',
    path: `${S}/files/upload-url`,
    permission: filesUpdate,
    // No CloudEvent: the URL is for a browser, and an event's answer would hand it to nobody.
    errors: [...GATES, [503, 'files_unavailable']],
  },
  'uploads.put': {
    method: 'PUT',
    path: '/api/v1/uploads/:ticket',
    // A signed, expiring, single-use upload URL: its signature is the credential.
    permission: { kind: 'public' },
    errors: [...GATES, ...JOB, ...MUTATION, ...RAW_BODY, ...TICKET],
  },
  'uploads.post': {
    method: 'POST',
    path: '/api/v1/uploads/:ticket',
    permission: { kind: 'public' },
    errors: [...GATES, ...JOB, ...MUTATION, ...RAW_BODY, ...TICKET],
  },
} as const satisfies RouteDeclarations);

export const prose = {
  'files.upload': {
    summary: 'One raw body of at most 64 MiB, streamed to a receiver Job and placed atomically.',
    answer:
      '`{path, status:"uploaded", sha256, size}` — raw body ≤ 64 MiB with `Content-Length` and `Content-Digest: sha-256=:<base64>:`, streamed to a receiver Job, placed atomically; `?parents=true` (beside `path`) makes the missing folders first',
  },
  'files.upload_url': {
    summary: 'Sign an upload URL for a file (PUT) or a folder (multipart POST). No Job yet.',
    answer: '`{url, expires_at, max_bytes}` — a signed URL valid 10 min (at most 15), good for one upload, bound to the server, `path`, `overwrite` and `parents`',
  },
  'uploads.put': {
    summary: 'The signed upload URL: one raw body into its file. No bearer: the signature is the credential.',
    answer:
      '`{path, status:"uploaded", sha256, size}` — as files.upload, with `Content-Length` ≤ `max_bytes`; `Content-Digest` optional (checked when given, else the digest is computed and answered); the URL is spent once its receiver starts (410 `upload_url_used` after)',
  },
  'uploads.post': {
    summary: 'The signed upload URL: a multipart form whose `files` parts land in its folder. No bearer.',
    answer:
      '`{path, status:"uploaded", files:[{path, sha256, size}]}` — `multipart/form-data` of at most `max_bytes` (framing included) with `Content-Length`; each `files` part (a plain file name) lands at `<path>/<name>` as an upload does, in order; the first refusal ends it, files placed before it stay',
  },
} satisfies ProseTable<typeof routes>;
