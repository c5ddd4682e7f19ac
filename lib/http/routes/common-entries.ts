/**
 * Pieces of route-table entries the routes of several functions share (functions/<fn>/routes.ts):
 * the file permissions, the servers' path prefix, and the groups of envelope codes a kind of route
 * can answer, all plain data; and `routesOf`, with which a function names itself once for all its routes.
 *
 * A function's routes.ts declares each of its routes: its table entry (method, path, permission,
 * envelope codes, event) and its prose, which lib/http/routes/table.ts collects. No validation
 * library there: the serving shell reads the table before a woken service answers its first probe,
 * and the prose is plain data only the document generators read (no bundle keeps it). The routes'
 * zod schemas (query, body, each success answer) are in the schemas.ts beside it, collected by
 * lib/http/routes/schemas.ts: apart because they load the validation library, which a woken
 * service loads only after its first probe.
 * @module
 */
import type { Permission } from '../../auth/permission.ts';
import type { ErrorCode, RouteDeclarations } from './types.ts';

export const filesGet: Permission = { kind: 'server', subresource: 'files', verb: 'get' };
export const filesUpdate: Permission = { kind: 'server', subresource: 'files', verb: 'update' };
export const S = '/api/v1/servers/:name';

/** The front of a file route (lib/http/file-call.ts): name, `?path=`, the gates, the editor. */
export const GATES: readonly ErrorCode[] = [
  [400, 'bad_name'],
  [400, 'bad_path'],
  [404, 'not_found'],
  [409, 'not_stopped'],
  [409, 'no_world_volume'],
  [409, 'maintenance_in_progress'],
  [503, 'files_unavailable'],
];
/** A read let in while the server runs, on a claim only the game's Pod may mount (lib/maintenance/running-reads.ts). */
export const BESIDE_GAME: readonly ErrorCode[] = [[409, 'volume_exclusive']];
/** A one-shot file Job's outcome (lib/http/error-map.ts, lib/files/errors.ts). */
export const JOB: readonly ErrorCode[] = [
  [404, 'not_found'],
  [400, 'bad_path'],
  [504, 'files_timeout'],
  // A redelivered event (lib/events/errors.ts).
  [409, 'event_conflict'],
  [410, 'event_answer_gone'],
];
/** What a change to the world can meet besides: the Job's refusals of a mutation. */
export const MUTATION: readonly ErrorCode[] = [
  [409, 'file_exists'],
  [409, 'file_changed'],
  [409, 'withheld_linked'],
  [409, 'redacted_value_unknown'],
  [413, 'too_large'],
  [507, 'volume_full'],
];
/** A change of more than one step whose Job or edit session ended without a result (lib/files/lost-change.ts). */
export const LOST: readonly ErrorCode[] = [[503, 'outcome_unknown']];
/** A JSON body (lib/http/file-request.ts `jsonBody`). */
export const JSON_BODY: readonly ErrorCode[] = [
  [400, 'bad_request'],
  [413, 'too_large'],
];
/** A raw body of known length with its digest (content-digest.ts, pod-stream.ts, the receiver). */
export const RAW_BODY: readonly ErrorCode[] = [
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
export const RECEIVER: readonly ErrorCode[] = [
  [400, 'bad_path'],
  [404, 'upload_not_found'],
  [409, 'upload_paused'],
  [409, 'upload_busy'],
  [409, 'upload_staging_tampered'],
  [507, 'upload_staging_full'],
  [503, 'files_unavailable'],
];
export const SERVER: readonly ErrorCode[] = [
  [400, 'bad_name'],
  [404, 'not_found'],
];

/** Function `F`'s routes as the table holds them: each declared entry with its `fn`. */
export type RoutesOf<F extends string, T extends RouteDeclarations> = { readonly [K in keyof T]: { readonly fn: F } & T[K] };

/** Function `fn`'s route entries, each with its `fn`: a function's routes.ts names it once, not once a route. */
export function routesOf<F extends string, T extends RouteDeclarations>(fn: F, routes: T): RoutesOf<F, T> {
  return Object.fromEntries(Object.entries(routes).map(([id, e]) => [id, { fn, ...e }])) as RoutesOf<F, T>;
}
