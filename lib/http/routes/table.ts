/**
 * Every HTTP route of every function, in one place: method, path, the function that serves it,
 * the permission it needs, the envelope codes it can answer and the CloudEvent type that carries
 * it. The Hono registration (register.ts), the permission map (lib/auth/actions.ts), the event
 * types (lib/http/event-entry.ts), the OpenAPI document and the README summary are derived from it;
 * the zod schemas of each route are in schemas.ts under the same id. Adding a route is one entry
 * here, one in schemas.ts, and its handler in the function's app.ts.
 *
 * No validation library here: the serving shell reads this before a woken service answers its
 * first probe.
 * @module
 */
import { SETTLE_URL, type Permission } from '../../auth/permission.ts';
import type { ErrorCode, RouteTable } from './types.ts';

const filesGet: Permission = { kind: 'server', subresource: 'files', verb: 'get' };
const filesUpdate: Permission = { kind: 'server', subresource: 'files', verb: 'update' };
const S = '/api/v1/servers/:name';

/** What any route behind the bearer check can answer, whatever it does (lib/http/app.ts, auth.ts, host.ts). */
export const COMMON_ERRORS: readonly ErrorCode[] = [
  [400, 'bad_request'], // a malformed request line or Host header (host.ts)
  [400, 'cancelled'], // the caller went away mid-request (app.ts)
  [401, 'unauthorized'],
  [403, 'forbidden'],
  [404, 'not_found'],
  [408, 'request_timeout'], // headers too slow (host.ts)
  [431, 'headers_too_large'],
  [500, 'internal'],
  [503, 'auth_unavailable'],
];
/** A route whose URL is its own credential: no bearer check, so none of its refusals. */
export const PUBLIC_COMMON_ERRORS: readonly ErrorCode[] = COMMON_ERRORS.filter(([, c]) => c !== 'unauthorized' && c !== 'forbidden' && c !== 'auth_unavailable');

/** The front of a file route (lib/http/file-call.ts): name, `?path=`, the gates, the editor. */
const GATES: readonly ErrorCode[] = [
  [400, 'bad_name'],
  [400, 'bad_path'],
  [404, 'not_found'],
  [409, 'not_stopped'],
  [409, 'no_world_volume'],
  [409, 'maintenance_in_progress'],
  [503, 'files_unavailable'],
];
/** A one-shot file Job's outcome (lib/http/error-map.ts, lib/files/errors.ts). */
const JOB: readonly ErrorCode[] = [
  [404, 'not_found'],
  [400, 'bad_path'],
  [504, 'files_timeout'],
  // A redelivered event (lib/events/errors.ts).
  [409, 'event_conflict'],
  [410, 'event_answer_gone'],
];
/** What a change to the world can meet besides: the Job's refusals of a mutation. */
const MUTATION: readonly ErrorCode[] = [
  [409, 'file_exists'],
  [409, 'file_changed'],
  [409, 'withheld_linked'],
  [413, 'too_large'],
  [507, 'volume_full'],
];
/** A JSON body (lib/http/file-request.ts `jsonBody`). */
const JSON_BODY: readonly ErrorCode[] = [[400, 'bad_request'], [413, 'too_large']];
/** A raw body of known length with its digest (content-digest.ts, pod-stream.ts, the receiver). */
const RAW_BODY: readonly ErrorCode[] = [
  [400, 'bad_request'],
  [400, 'digest_required'],
  [400, 'bad_digest'],
  [400, 'digest_mismatch'],
  [400, 'upload_incomplete'],
  [408, 'upload_stalled'],
  [411, 'length_required'],
  [413, 'too_large'],
];
/** The upload receiver's refusals (job/serve/receive-session.ts, lib/uploads/sessions.ts). */
const RECEIVER: readonly ErrorCode[] = [
  [400, 'bad_path'],
  [404, 'upload_not_found'],
  [409, 'upload_paused'],
  [409, 'upload_busy'],
  [409, 'upload_staging_tampered'],
  [507, 'upload_staging_full'],
  [503, 'files_unavailable'],
];
const SERVER: readonly ErrorCode[] = [[400, 'bad_name'], [404, 'not_found']];

export const ROUTES = {
  'files.list': {
    fn: 'files-list',
    method: 'GET',
    path: `${S}/files`,
    permission: filesGet,
    summary: "One folder's entries (empty path: the world's root), or a page of them with `limit`, `after` or `q`. No lock.",
    answer:
      '`{path, entries:[{name,size,is_dir,mod_time,mode,is_symlink}], truncated, next?, free_bytes}` — empty `path` = the root; `free_bytes` `null` when unknown. Without `limit`/`after`/`q`: directory order, at most 2000 entries. With any: byte order of name, at most `limit` (default 1000, at most 5000) after `after`, names containing `q` in any case; `next` (the next page\'s `after`) when there are more',
    errors: [...GATES, ...JOB],
    event: { type: 'dev.felis.files.list', path: true, query: ['limit', 'after', 'q'] },
  },
  'files.search': {
    fn: 'files-search',
    method: 'GET',
    path: `${S}/files/search`,
    permission: filesGet,
    summary: 'Entries below a folder, at any depth, whose name contains `q` or matches it as a glob (`*`, `?`), any case. No lock.',
    answer: '`{path, q, matches:[{path,name,size,is_dir,mod_time}], truncated, scanned}` — in byte order of path; at most `limit` (default 200, at most 1000) matches and 5 s of walking, `truncated` when it stopped early; links are never descended',
    errors: [...GATES, ...JOB, [400, 'bad_request']],
    event: { type: 'dev.felis.files.search', path: true, query: ['q', 'limit'] },
  },
  'files.read': {
    fn: 'files-read',
    method: 'GET',
    path: `${S}/file`,
    permission: filesGet,
    summary: "A file's bytes, base64. No lock.",
    answer: '`{path, content (base64), sha256 (of the bytes on disk), content_sha256 (of what is sent)}` — at most 1 MiB',
    errors: [...GATES, ...JOB, [413, 'too_large'], [502, 'read_damaged']],
    event: { type: 'dev.felis.files.read', path: true },
  },
  'files.write': {
    fn: 'files-write',
    method: 'PUT',
    path: `${S}/file`,
    permission: filesUpdate,
    summary: 'Replace or create a file, atomically, under the world lock.',
    answer: '`{path, status:"written", sha256}` — at most 256 KiB, atomic; with a job key the content is streamed to the write Job\'s Pod, in no cluster object (see docs/writes.md)',
    errors: [...GATES, ...JOB, ...MUTATION, ...JSON_BODY, [400, 'digest_required'], [400, 'bad_digest'], [400, 'digest_mismatch'], [504, 'write_not_delivered']],
    event: { type: 'dev.felis.files.write', path: true },
  },
  'files.mkdir': {
    fn: 'files-mkdir',
    method: 'POST',
    path: `${S}/files/mkdir`,
    permission: filesUpdate,
    summary: 'One new folder, under the world lock.',
    answer: '`{path, status:"created"}` — one level',
    errors: [...GATES, ...JOB, ...MUTATION],
    event: { type: 'dev.felis.files.mkdir', path: true },
  },
  'files.delete': {
    fn: 'files-delete',
    method: 'DELETE',
    path: `${S}/file`,
    permission: filesUpdate,
    summary: 'A file, or a folder recursively, under the world lock.',
    answer: '`{path, status:"deleted"}` — recursive; links removed, not followed',
    errors: [...GATES, ...JOB, ...MUTATION],
    event: { type: 'dev.felis.files.delete', path: true },
  },
  'files.rename': {
    fn: 'files-rename',
    method: 'POST',
    path: `${S}/files/rename`,
    permission: filesUpdate,
    summary: 'Move without replacing, under the world lock.',
    answer: '`{path, to, status:"renamed"}` — never replaces',
    errors: [...GATES, ...JOB, ...MUTATION, ...JSON_BODY],
    event: { type: 'dev.felis.files.rename', path: true },
  },
  'files.delete_many': {
    fn: 'files-batch',
    method: 'POST',
    path: `${S}/files/delete`,
    permission: filesUpdate,
    summary: 'Delete many files or folders in one Job, every one checked first, under the world lock.',
    answer: '`{done:[path…], failed:[{path, error:{code, message}}]}` — 1–1000 paths; every path is checked before anything changes (the first bad one is answered with its `path` and nothing changed); `failed` only what the disk refused after',
    errors: [...GATES, ...JOB, ...MUTATION, ...JSON_BODY, [409, 'batch_conflict']],
    event: { type: 'dev.felis.files.delete_many' },
  },
  'files.move': {
    fn: 'files-batch',
    method: 'POST',
    path: `${S}/files/move`,
    permission: filesUpdate,
    summary: 'Move or rename many files or folders in one Job without replacing, every one checked first, under the world lock.',
    answer: '`{done:[from…], failed:[{path, error}]}` — 1–1000 moves; never replaces; two moves onto one name, or of or into a folder another move takes, are 409 `batch_conflict`; nothing changed on any refusal',
    errors: [...GATES, ...JOB, ...MUTATION, ...JSON_BODY, [409, 'batch_conflict']],
    event: { type: 'dev.felis.files.move' },
  },
  'files.chmod': {
    fn: 'files-batch',
    method: 'POST',
    path: `${S}/files/chmod`,
    permission: filesUpdate,
    summary: "Set many files' or folders' permission bits in one Job, every one checked first, under the world lock.",
    answer: '`{done:[path…], failed:[{path, error}]}` — 1–1000 files; `mode` three octal digits (`"644"`); links, special files and the withheld file are 400 `bad_path`; nothing changed on any refusal',
    errors: [...GATES, ...JOB, ...MUTATION, ...JSON_BODY, [409, 'batch_conflict']],
    event: { type: 'dev.felis.files.chmod' },
  },
  'files.unzip': {
    fn: 'files-unzip',
    method: 'POST',
    path: `${S}/files/unzip`,
    permission: filesUpdate,
    summary: 'Extract an archive (.zip, .tar in any compression, .7z, .rar) or a single .gz/.bz2/.xz/.zst file in the background; follow it in the ops listing.',
    answer: '202 `{op}` — extracts in the background into the archive\'s folder, or into the existing folder `to`; `.zip`, `.tar`, `.tar.gz`/`.tgz`, `.tar.bz2`/`.tbz2`, `.tar.xz`/`.txz`, `.tar.zst`/`.tzst`, `.7z`, `.rar`, or a single `.gz`, `.bz2`, `.xz` or `.zst` file, extracted to its name without the ending (any case; the ending decides the format, the longest ending winning; anything else is 400 `bad_path` before any Job)',
    errors: [...GATES, ...JOB, ...MUTATION, ...JSON_BODY],
    event: { type: 'dev.felis.files.unzip', path: true },
  },
  'files.zip': {
    fn: 'files-zip',
    method: 'POST',
    path: `${S}/files/zip`,
    permission: filesUpdate,
    summary: 'Pack a file or folder into a .zip next to it, in the background.',
    answer: '202 `{op}` — packs into `name` (a `.zip` file name) next to it, or a free name (`world.zip`, `world (2).zip`, …)',
    errors: [...GATES, ...JOB, ...MUTATION, ...JSON_BODY],
    event: { type: 'dev.felis.files.zip', path: true },
  },
  'files.pull': {
    fn: 'files-pull',
    method: 'POST',
    path: `${S}/files/pull`,
    permission: filesUpdate,
    summary: 'Fetch a file from an http or https URL into a folder, in the background, through the SSRF guard; follow it in the ops listing.',
    answer:
      '202 `{op}` — `path` an existing folder (`""` the root); the file lands as `name`, or the name of the answer\'s Content-Disposition or the URL\'s path, never over an existing file; the guard (in the Job, before every connection and redirect) refuses special-purpose addresses and ports but 80/443 unless the operator allows them (`pull_refused` in the op)',
    errors: [...GATES, ...JOB, ...JSON_BODY],
    event: { type: 'dev.felis.files.pull' },
  },
  'files.pull.cancel': {
    fn: 'files-pull',
    method: 'DELETE',
    path: `${S}/files/pull/:op`,
    permission: filesUpdate,
    summary: "Cancel a running pull through its Job's Pod; the op ends `pull_cancelled`, nothing placed.",
    answer: '202 `{op, status:"cancelling"}` — the op then ends `pull_cancelled` in the ops listing; 409 `pull_not_running` once it has ended',
    errors: [...SERVER, [409, 'pull_not_running'], [503, 'pull_cancel_unavailable'], [503, 'files_unavailable']],
  },
  'files.compress': {
    fn: 'files-compress',
    method: 'POST',
    path: `${S}/files/compress`,
    permission: filesUpdate,
    summary: 'Pack files and folders of one folder into a zip, tar.gz, tar.xz or tar.zst in that folder, in the background.',
    answer:
      '202 `{op}` (op `compress`, path the folder) — 1–1000 `paths`, all in one folder (else 400 `mixed_folders`), none twice, not the root; `format` `zip`, `tar.gz`, `tar.xz` or `tar.zst`; the archive is `name` (a file name with the format\'s ending) or `archive-<UTC yyyy-mm-ddThhmmss>.<ending>`, never over an existing file (the op fails `file_exists`); links, special files and the withheld file left out',
    errors: [...GATES, ...JOB, ...MUTATION, ...JSON_BODY, [400, 'mixed_folders']],
    event: { type: 'dev.felis.files.compress' },
  },
  'files.copy': {
    fn: 'files-copy',
    method: 'POST',
    path: `${S}/files/copy`,
    permission: filesUpdate,
    summary: 'Copy a file or folder, all or nothing; a regular file up to 64 MiB at once, anything else in the background.',
    answer:
      '`{path, to, status:"copied", sha256}` for a regular file up to 64 MiB; else 202 `{op}` (op `copy` in `files/ops`) — to `to` (must not exist; its folder must) or beside it as `<name> copy<.ext>`, `<name> copy 2<.ext>`, …; links that stay inside are copied as links, other links, special files and the withheld file are left out',
    errors: [...GATES, ...JOB, ...MUTATION, ...JSON_BODY],
    event: { type: 'dev.felis.files.copy', path: true },
  },
  'files.upload': {
    fn: 'files-upload',
    method: 'PUT',
    path: `${S}/files/upload`,
    permission: filesUpdate,
    summary: 'One raw body of at most 64 MiB, streamed to a receiver Job and placed atomically.',
    answer: '`{path, status:"uploaded", sha256, size}` — raw body ≤ 64 MiB with `Content-Length` and `Content-Digest: sha-256=:<base64>:`, streamed to a receiver Job, placed atomically; `?parents=true` (beside `path`) makes the missing folders first',
    errors: [...GATES, ...JOB, ...MUTATION, ...RAW_BODY, ...RECEIVER],
  },
  'uploads.begin': {
    fn: 'files-uploads',
    method: 'POST',
    path: `${S}/files/uploads`,
    permission: filesUpdate,
    summary: 'Begin a resumable upload session (one per server).',
    answer: '201 view `{id, path, size, received, part_max_bytes, parts:[{size, sha256}]}` — one session per server, listed in `files/ops` while it lives (docs/uploads.md); `?parents=true` (beside `path`) makes the missing folders at the begin',
    errors: [...GATES, ...JOB, ...MUTATION, ...JSON_BODY, ...RECEIVER, [429, 'too_many_uploads']],
  },
  'uploads.get': {
    fn: 'files-uploads',
    method: 'GET',
    path: `${S}/files/uploads/:id`,
    permission: filesGet,
    summary: "An upload session's view, from its serving receiver (never starts one).",
    answer: '200 view',
    errors: [...SERVER, ...RECEIVER],
  },
  'uploads.part': {
    fn: 'files-uploads',
    method: 'PUT',
    path: `${S}/files/uploads/:id`,
    permission: filesUpdate,
    summary: 'One raw part (at most 32 MiB) at `offset`, appended on the world volume.',
    answer: '200 view — raw part ≤ 32 MiB with `Content-Length`, `Content-Digest`',
    errors: [...SERVER, ...RAW_BODY, ...RECEIVER, [409, 'upload_offset_mismatch'], [413, 'part_too_large'], [409, 'not_stopped'], [409, 'no_world_volume'], [409, 'maintenance_in_progress']],
  },
  'uploads.cancel': {
    fn: 'files-uploads',
    method: 'DELETE',
    path: `${S}/files/uploads/:id`,
    permission: filesUpdate,
    summary: 'Cancel an upload session.',
    answer: '204',
    errors: [...SERVER, ...RECEIVER, [409, 'not_stopped'], [409, 'no_world_volume'], [409, 'maintenance_in_progress']],
  },
  'uploads.commit': {
    fn: 'files-uploads',
    method: 'POST',
    path: `${S}/files/uploads/:id/commit`,
    permission: filesUpdate,
    summary: "Check the whole file's digest and place it.",
    answer: '202 `{op, sha256}` — `op` is the upload as `files/ops` lists it, already `succeeded`',
    errors: [...GATES, ...JOB, ...MUTATION, ...JSON_BODY, ...RECEIVER, [409, 'upload_incomplete'], [400, 'digest_mismatch']],
  },
  'files.ops': {
    fn: 'files-ops',
    method: 'GET',
    path: `${S}/files/ops`,
    permission: filesGet,
    summary: "The server's ten newest background ops, newest first; works while the server runs.",
    answer: '`{ops:[…]}` — op views, see Background ops',
    errors: [...SERVER, [503, 'files_unavailable']],
    event: { type: 'dev.felis.files.ops' },
  },
  'files.download': {
    fn: 'files-download',
    method: 'POST',
    path: `${S}/files/download`,
    permission: filesGet,
    summary: 'Sign a download URL for a file, or a folder as a zip. No Job yet.',
    answer: '`{url, filename, expires_at}` — a signed URL valid 10 min; the world root is `bad_path`',
    errors: [...GATES, [503, 'export_unavailable']],
  },
  'exports.download': {
    fn: 'files-download',
    method: 'GET',
    path: '/api/v1/exports/:ticket/download',
    // A signed, expiring download URL: its signature is the credential.
    permission: { kind: 'public' },
    summary: 'The signed URL: the file, or the folder as a zip stream. No bearer: the signature is the credential.',
    answer: 'the file (`Content-Length`), or the folder as a zip stream, with `Content-Disposition: attachment`, `nosniff`, `no-store`; an export Job holds the world as `export` while it streams (docs/downloads.md)',
    errors: [...GATES, ...JOB, [405, 'method_not_allowed'], [410, 'export_expired'], [413, 'too_large'], [429, 'export_busy'], [503, 'export_unavailable'], [504, 'export_timeout']],
  },
  'holder.get': {
    fn: 'holder',
    method: 'GET',
    path: `${S}/holder`,
    permission: { kind: 'server', subresource: 'holder', verb: 'get' },
    summary: "What holds one server's world.",
    answer: '`{held, kind?, source?: "job"\\|"lock", job?, since?, stale_lock?}`',
    errors: SERVER,
    event: { type: 'dev.felis.holder.get' },
  },
  'holders.list': {
    fn: 'holder',
    method: 'GET',
    path: '/api/v1/holders',
    // Every holder in the namespace: a per-server grant (resourceNames) cannot allow a list.
    permission: { kind: 'server', subresource: 'holder', verb: 'list' },
    summary: 'Every held server (or one with a stale lock) in the namespace, for operators.',
    answer: '`{holders:[{server, held, kind, source, job?, since?, stale_lock?}]}`',
    errors: [],
    event: { type: 'dev.felis.holders.list' },
  },
  'server.start': {
    fn: 'start',
    method: 'POST',
    path: `${S}/start`,
    permission: { kind: 'server', subresource: 'state', verb: 'update' },
    summary: 'The guarded start: refused while anything holds the world.',
    answer: '202 `{name, desiredState:"Running", phase, ready}`; 409 `maintenance_in_progress` while held (`world_reclaiming` while the idle-world reaper holds it)',
    errors: [...SERVER, [409, 'maintenance_in_progress'], [409, 'world_reclaiming']],
    event: { type: 'dev.felis.server.start' },
  },
  'server.stop': {
    fn: 'start',
    method: 'POST',
    path: `${S}/stop`,
    permission: { kind: 'server', subresource: 'state', verb: 'update' },
    summary: 'Stop the server; always allowed.',
    answer: '202 `{name, desiredState:"Stopped", phase, ready}`',
    errors: SERVER,
    event: { type: 'dev.felis.server.stop' },
  },
  'lock.remove': {
    fn: 'world-lock',
    method: 'DELETE',
    path: `${S}/lock`,
    // What `kubectl annotate … maintenance-` would need.
    permission: { kind: 'server', subresource: 'lock', verb: 'delete' },
    summary: 'Remove a stuck annotation lock, with the checks kubectl cannot make.',
    answer: '`{name, removed, lock:{kind,since,value,fresh}\\|null}`; 409 `maintenance_in_progress` while a Job holds the world, `lock_protected` for a `migration@` lock, `lock_fresh` for one younger than 2 min without `force=true`',
    errors: [...SERVER, [400, 'bad_request'], [409, 'maintenance_in_progress'], [409, 'lock_protected'], [409, 'lock_fresh']],
    event: { type: 'dev.felis.lock.remove', force: true },
  },
  'restore.settle': {
    fn: 'settle',
    method: 'POST',
    path: '/api/v1/restore-chains/settle',
    // Touches no server in particular: a non-resource URL only a ClusterRole can grant.
    permission: { kind: 'nonresource', path: SETTLE_URL, verb: 'post' },
    summary: 'One pass of restore-chain settling.',
    answer: '`{chains:[{job, server, state, reason?, message?, error?}]}`',
    errors: [],
    event: { type: 'dev.felis.restore.settle' },
  },
} as const satisfies RouteTable;

export type RouteId = keyof typeof ROUTES;
