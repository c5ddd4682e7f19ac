/**
 * files-trash's routes (files.trash.list, files.trash.restore, files.trash.purge, files.trash.purge_all): their table entries and prose (what a declaration holds,
 * and why: lib/http/routes/common-entries.ts).
 * @module
 */
import { BESIDE_GAME, filesGet, filesUpdate, GATES, JOB, JSON_BODY, LOST, MUTATION, routesOf, S } from '../../lib/http/routes/common-entries.ts';
import type { ProseTable, RouteDeclarations } from '../../lib/http/routes/types.ts';

export const routes = routesOf('files-trash', {
  'files.trash.list': {
    method: 'GET',
    path: `${S}/files/trash`,
    permission: filesGet,
    errors: [...GATES, ...BESIDE_GAME, ...JOB, [400, 'bad_request']],
    event: { type: 'dev.felis.files.trash.list', query: ['limit', 'after'] },
  },
  'files.trash.restore': {
    method: 'POST',
    path: `${S}/files/trash/:id/restore`,
    permission: filesUpdate,
    errors: [...GATES, ...JOB, ...MUTATION, ...LOST, ...JSON_BODY, [404, 'trash_not_found']],
    event: { type: 'dev.felis.files.trash.restore', id: true },
  },
  'files.trash.purge': {
    method: 'DELETE',
    path: `${S}/files/trash/:id`,
    permission: filesUpdate,
    errors: [...GATES, ...JOB, [400, 'bad_request'], [404, 'trash_not_found']],
    event: { type: 'dev.felis.files.trash.purge', id: true },
  },
  // Everything at once is HTTP only: no event can empty the trash by leaving out an id.
  'files.trash.purge_all': {
    method: 'DELETE',
    path: `${S}/files/trash`,
    permission: filesUpdate,
    errors: [...GATES, ...JOB],
  },
} as const satisfies RouteDeclarations);

export const prose = {
  'files.trash.list': {
    summary: 'The undo trash: what deletes, overwrites and extractions removed, newest first, a page at a time. No lock.',
    answer:
      "`{items:[{id, op, paths:[…], bytes, entries, at, actor, expires_at}], next?, trash_bytes}` — newest first; at most `limit` records after the id `after`; `next` (the next page's `after`) when there are more; `trash_bytes` what the whole trash holds",
  },
  'files.trash.restore': {
    summary: 'Put a trash record back where it was (or under the folder `to`), under the world lock.',
    answer:
      '`{id, restored:[paths]}` — all or nothing; the folders missing on the way (`to` too) are made; 409 `file_exists` (its `path` names it) when one of them exists again; 404 `trash_not_found`',
  },
  'files.trash.purge': {
    summary: 'Remove one trash record for good, under the world lock.',
    answer: '`{id, purged, bytes}` — `bytes` freed; 404 `trash_not_found`',
  },
  'files.trash.purge_all': {
    summary: 'Empty the undo trash for good, under the world lock.',
    answer: '`{purged, bytes}` — every record; `bytes` freed',
  },
} satisfies ProseTable<typeof routes>;
