/**
 * Every HTTP route of every function, in one place: method, path, the function that serves it,
 * the permission it needs, the envelope codes it can answer and the CloudEvent type that carries
 * it. The Hono registration (register.ts), the permission map (lib/auth/actions.ts), the event
 * types (lib/http/event-entry.ts), the OpenAPI document and the README summary are derived from it;
 * the zod schemas of each route are in schemas.ts and its summary and answer in words in prose.ts,
 * under the same id. Adding a route is one entry here, one in schemas.ts, one in prose.ts, and its
 * handler in the function's app.ts.
 *
 * No validation library here: the serving shell reads this before a woken service answers its
 * first probe.
 * @module
 */
import { type Permission, SETTLE_URL } from '../../auth/permission.ts';
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
/** A read let in while the server runs, on a claim only the game's Pod may mount (lib/maintenance/running-reads.ts). */
const BESIDE_GAME: readonly ErrorCode[] = [[409, 'volume_exclusive']];
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
  [409, 'redacted_value_unknown'],
  [413, 'too_large'],
  [507, 'volume_full'],
];
/** A change of more than one step whose Job or edit session ended without a result (lib/files/lost-change.ts). */
const LOST: readonly ErrorCode[] = [[503, 'outcome_unknown']];
/** A JSON body (lib/http/file-request.ts `jsonBody`). */
const JSON_BODY: readonly ErrorCode[] = [
  [400, 'bad_request'],
  [413, 'too_large'],
];
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
const SERVER: readonly ErrorCode[] = [
  [400, 'bad_name'],
  [404, 'not_found'],
];

export const ROUTES = {
  'files.list': {
    fn: 'files-list',
    method: 'GET',
    path: `${S}/files`,
    permission: filesGet,
    errors: [...GATES, ...BESIDE_GAME, ...JOB],
    event: { type: 'dev.felis.files.list', path: true, query: ['limit', 'after', 'q'] },
  },
  'files.search': {
    fn: 'files-search',
    method: 'GET',
    path: `${S}/files/search`,
    permission: filesGet,
    errors: [...GATES, ...BESIDE_GAME, ...JOB, [400, 'bad_request']],
    event: { type: 'dev.felis.files.search', path: true, query: ['q', 'limit'] },
  },
  'files.read': {
    fn: 'files-read',
    method: 'GET',
    path: `${S}/file`,
    permission: filesGet,
    errors: [...GATES, ...BESIDE_GAME, ...JOB, [413, 'too_large'], [502, 'read_damaged']],
    event: { type: 'dev.felis.files.read', path: true },
  },
  'files.write': {
    fn: 'files-write',
    method: 'PUT',
    path: `${S}/file`,
    permission: filesUpdate,
    errors: [...GATES, ...JOB, ...MUTATION, ...JSON_BODY, [400, 'digest_required'], [400, 'bad_digest'], [400, 'digest_mismatch'], [504, 'write_not_delivered']],
    event: { type: 'dev.felis.files.write', path: true },
  },
  'files.mkdir': {
    fn: 'files-mkdir',
    method: 'POST',
    path: `${S}/files/mkdir`,
    permission: filesUpdate,
    errors: [...GATES, ...JOB, ...MUTATION],
    event: { type: 'dev.felis.files.mkdir', path: true },
  },
  'files.delete': {
    fn: 'files-delete',
    method: 'DELETE',
    path: `${S}/file`,
    permission: filesUpdate,
    errors: [...GATES, ...JOB, ...MUTATION, ...LOST],
    event: { type: 'dev.felis.files.delete', path: true },
  },
  'files.rename': {
    fn: 'files-rename',
    method: 'POST',
    path: `${S}/files/rename`,
    permission: filesUpdate,
    errors: [...GATES, ...JOB, ...MUTATION, ...JSON_BODY],
    event: { type: 'dev.felis.files.rename', path: true },
  },
  'files.delete_many': {
    fn: 'files-batch',
    method: 'POST',
    path: `${S}/files/delete`,
    permission: filesUpdate,
    errors: [...GATES, ...JOB, ...MUTATION, ...LOST, ...JSON_BODY, [409, 'batch_conflict']],
    event: { type: 'dev.felis.files.delete_many' },
  },
  'files.move': {
    fn: 'files-batch',
    method: 'POST',
    path: `${S}/files/move`,
    permission: filesUpdate,
    errors: [...GATES, ...JOB, ...MUTATION, ...LOST, ...JSON_BODY, [409, 'batch_conflict']],
    event: { type: 'dev.felis.files.move' },
  },
  'files.chmod': {
    fn: 'files-batch',
    method: 'POST',
    path: `${S}/files/chmod`,
    permission: filesUpdate,
    errors: [...GATES, ...JOB, ...MUTATION, ...LOST, ...JSON_BODY, [409, 'batch_conflict']],
    event: { type: 'dev.felis.files.chmod' },
  },
  'files.unzip': {
    fn: 'files-unzip',
    method: 'POST',
    path: `${S}/files/unzip`,
    permission: filesUpdate,
    errors: [...GATES, ...JOB, ...MUTATION, ...JSON_BODY],
    event: { type: 'dev.felis.files.unzip', path: true },
  },
  'files.zip': {
    fn: 'files-zip',
    method: 'POST',
    path: `${S}/files/zip`,
    permission: filesUpdate,
    errors: [...GATES, ...JOB, ...MUTATION, ...JSON_BODY],
    event: { type: 'dev.felis.files.zip', path: true },
  },
  'files.pull': {
    fn: 'files-pull',
    method: 'POST',
    path: `${S}/files/pull`,
    permission: filesUpdate,
    errors: [...GATES, ...JOB, ...JSON_BODY, [429, 'too_many_pulls']],
    event: { type: 'dev.felis.files.pull' },
  },
  'files.pull.cancel': {
    fn: 'files-pull',
    method: 'DELETE',
    path: `${S}/files/pull/:op`,
    permission: filesUpdate,
    errors: [...SERVER, [409, 'pull_not_running'], [503, 'pull_cancel_unavailable'], [503, 'files_unavailable']],
  },
  'files.compress': {
    fn: 'files-compress',
    method: 'POST',
    path: `${S}/files/compress`,
    permission: filesUpdate,
    errors: [...GATES, ...JOB, ...MUTATION, ...JSON_BODY, [400, 'mixed_folders']],
    event: { type: 'dev.felis.files.compress' },
  },
  'files.copy': {
    fn: 'files-copy',
    method: 'POST',
    path: `${S}/files/copy`,
    permission: filesUpdate,
    errors: [...GATES, ...JOB, ...MUTATION, ...JSON_BODY],
    event: { type: 'dev.felis.files.copy', path: true },
  },
  'files.upload': {
    fn: 'files-upload',
    method: 'PUT',
    path: `${S}/files/upload`,
    permission: filesUpdate,
    errors: [...GATES, ...JOB, ...MUTATION, ...RAW_BODY, ...RECEIVER],
  },
  'uploads.begin': {
    fn: 'files-uploads',
    method: 'POST',
    path: `${S}/files/uploads`,
    permission: filesUpdate,
    errors: [...GATES, ...JOB, ...MUTATION, ...JSON_BODY, ...RECEIVER, [429, 'too_many_uploads']],
  },
  'uploads.get': {
    fn: 'files-uploads',
    method: 'GET',
    path: `${S}/files/uploads/:id`,
    permission: filesGet,
    errors: [...SERVER, ...RECEIVER],
  },
  'uploads.part': {
    fn: 'files-uploads',
    method: 'PUT',
    path: `${S}/files/uploads/:id`,
    permission: filesUpdate,
    errors: [...SERVER, ...RAW_BODY, ...RECEIVER, [409, 'upload_offset_mismatch'], [413, 'part_too_large'], [409, 'not_stopped'], [409, 'no_world_volume'], [409, 'maintenance_in_progress']],
  },
  'uploads.cancel': {
    fn: 'files-uploads',
    method: 'DELETE',
    path: `${S}/files/uploads/:id`,
    permission: filesUpdate,
    errors: [...SERVER, ...RECEIVER, [409, 'not_stopped'], [409, 'no_world_volume'], [409, 'maintenance_in_progress']],
  },
  'uploads.commit': {
    fn: 'files-uploads',
    method: 'POST',
    path: `${S}/files/uploads/:id/commit`,
    permission: filesUpdate,
    errors: [...GATES, ...JOB, ...MUTATION, ...JSON_BODY, ...RECEIVER, [409, 'upload_incomplete'], [400, 'digest_mismatch']],
  },
  'files.trash.list': {
    fn: 'files-trash',
    method: 'GET',
    path: `${S}/files/trash`,
    permission: filesGet,
    errors: [...GATES, ...BESIDE_GAME, ...JOB, [400, 'bad_request']],
    event: { type: 'dev.felis.files.trash.list', query: ['limit', 'after'] },
  },
  'files.trash.restore': {
    fn: 'files-trash',
    method: 'POST',
    path: `${S}/files/trash/:id/restore`,
    permission: filesUpdate,
    errors: [...GATES, ...JOB, ...MUTATION, ...LOST, ...JSON_BODY, [404, 'trash_not_found']],
    event: { type: 'dev.felis.files.trash.restore', id: true },
  },
  'files.trash.purge': {
    fn: 'files-trash',
    method: 'DELETE',
    path: `${S}/files/trash/:id`,
    permission: filesUpdate,
    errors: [...GATES, ...JOB, [400, 'bad_request'], [404, 'trash_not_found']],
    event: { type: 'dev.felis.files.trash.purge', id: true },
  },
  // Everything at once is HTTP only: no event can empty the trash by leaving out an id.
  'files.trash.purge_all': {
    fn: 'files-trash',
    method: 'DELETE',
    path: `${S}/files/trash`,
    permission: filesUpdate,
    errors: [...GATES, ...JOB],
  },
  'files.ops': {
    fn: 'files-ops',
    method: 'GET',
    path: `${S}/files/ops`,
    permission: filesGet,
    errors: [...SERVER, [503, 'files_unavailable']],
    event: { type: 'dev.felis.files.ops' },
  },
  'files.download': {
    fn: 'files-download',
    method: 'POST',
    path: `${S}/files/download`,
    permission: filesGet,
    errors: [...GATES, ...BESIDE_GAME, [503, 'export_unavailable']],
  },
  'exports.download': {
    fn: 'files-download',
    method: 'GET',
    path: '/api/v1/exports/:ticket/download',
    // A signed, expiring download URL: its signature is the credential.
    permission: { kind: 'public' },
    errors: [
      ...GATES,
      ...BESIDE_GAME,
      ...JOB,
      [405, 'method_not_allowed'],
      [410, 'export_expired'],
      [413, 'too_large'],
      [416, 'range_not_satisfiable'],
      [429, 'export_busy'],
      [503, 'export_unavailable'],
      [504, 'export_timeout'],
    ],
  },
  'holder.get': {
    fn: 'holder',
    method: 'GET',
    path: `${S}/holder`,
    permission: { kind: 'server', subresource: 'holder', verb: 'get' },
    errors: SERVER,
    event: { type: 'dev.felis.holder.get' },
  },
  'holders.list': {
    fn: 'holder',
    method: 'GET',
    path: '/api/v1/holders',
    // Every holder in the namespace: a per-server grant (resourceNames) cannot allow a list.
    permission: { kind: 'server', subresource: 'holder', verb: 'list' },
    errors: [],
    event: { type: 'dev.felis.holders.list' },
  },
  'server.start': {
    fn: 'start',
    method: 'POST',
    path: `${S}/start`,
    permission: { kind: 'server', subresource: 'state', verb: 'update' },
    errors: [...SERVER, [409, 'maintenance_in_progress'], [409, 'world_reclaiming']],
    event: { type: 'dev.felis.server.start' },
  },
  'server.stop': {
    fn: 'start',
    method: 'POST',
    path: `${S}/stop`,
    permission: { kind: 'server', subresource: 'state', verb: 'update' },
    errors: SERVER,
    event: { type: 'dev.felis.server.stop' },
  },
  'lock.remove': {
    fn: 'world-lock',
    method: 'DELETE',
    path: `${S}/lock`,
    // What `kubectl annotate … maintenance-` would need.
    permission: { kind: 'server', subresource: 'lock', verb: 'delete' },
    errors: [...SERVER, [400, 'bad_request'], [409, 'maintenance_in_progress'], [409, 'lock_protected'], [409, 'lock_fresh']],
    event: { type: 'dev.felis.lock.remove', force: true },
  },
  'restore.settle': {
    fn: 'settle',
    method: 'POST',
    path: '/api/v1/restore-chains/settle',
    // Touches no server in particular: a non-resource URL only a ClusterRole can grant.
    permission: { kind: 'nonresource', path: SETTLE_URL, verb: 'post' },
    errors: [],
    event: { type: 'dev.felis.restore.settle' },
  },
} as const satisfies RouteTable;

export type RouteId = keyof typeof ROUTES;
