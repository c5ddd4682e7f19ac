/**
 * files-uploads's routes (uploads.begin, uploads.get, uploads.part, uploads.cancel, uploads.commit): their table entries and prose (what a declaration holds,
 * and why: lib/http/routes/common-entries.ts).
 * @module
 */
import { filesGet, filesUpdate, GATES, JOB, JSON_BODY, MUTATION, RAW_BODY, RECEIVER, routesOf, S, SERVER } from '../../lib/http/routes/common-entries.ts';
import type { ProseTable, RouteDeclarations } from '../../lib/http/routes/types.ts';

export const routes = routesOf('files-uploads', {
  'uploads.begin': {
    method: 'POST',
    path: `${S}/files/uploads`,
    permission: filesUpdate,
    errors: [...GATES, ...JOB, ...MUTATION, ...JSON_BODY, ...RECEIVER, [429, 'too_many_uploads']],
  },
  'uploads.get': {
    method: 'GET',
    path: `${S}/files/uploads/:id`,
    permission: filesGet,
    errors: [...SERVER, ...RECEIVER],
  },
  'uploads.part': {
    method: 'PUT',
    path: `${S}/files/uploads/:id`,
    permission: filesUpdate,
    errors: [...SERVER, ...RAW_BODY, ...RECEIVER, [409, 'upload_offset_mismatch'], [413, 'part_too_large'], [409, 'not_stopped'], [409, 'no_world_volume'], [409, 'maintenance_in_progress']],
  },
  'uploads.cancel': {
    method: 'DELETE',
    path: `${S}/files/uploads/:id`,
    permission: filesUpdate,
    errors: [...SERVER, ...RECEIVER, [409, 'not_stopped'], [409, 'no_world_volume'], [409, 'maintenance_in_progress']],
  },
  'uploads.commit': {
    method: 'POST',
    path: `${S}/files/uploads/:id/commit`,
    permission: filesUpdate,
    errors: [...GATES, ...JOB, ...MUTATION, ...JSON_BODY, ...RECEIVER, [409, 'upload_incomplete'], [400, 'digest_mismatch']],
  },
} as const satisfies RouteDeclarations);

export const prose = {
  'uploads.begin': {
    summary: 'Begin a resumable upload session (one per server).',
    answer:
      "201 view `{id, path, size, received, part_max_bytes, parts:[{size, sha256}]}` — one session per server, listed in `files/ops` while it lives; it holds the world only while its calls run (begin, each part, commit, cancel: each in its turn in the world's line, as any change), so other changes run between parts and a start goes ahead (docs/uploads.md); `?parents=true` (beside `path`) makes the missing folders at the begin",
  },
  'uploads.get': {
    summary: "An upload session's view, from its serving receiver (never starts one).",
    answer: '200 view',
  },
  'uploads.part': {
    summary: 'One raw part (at most 32 MiB) at `offset`, appended on the world volume.',
    answer:
      "200 view — raw part ≤ 32 MiB with `Content-Length`, `Content-Digest`; the server stopped (409 `not_stopped` while it runs), in its turn in the world's line, holding the world while its bytes are placed",
  },
  'uploads.cancel': {
    summary: 'Cancel an upload session.',
    answer: '204',
  },
  'uploads.commit': {
    summary: "Check the whole file's digest and place it.",
    answer: '202 `{op, sha256}` — `op` is the upload as `files/ops` lists it, already `succeeded`',
  },
} satisfies ProseTable<typeof routes>;
