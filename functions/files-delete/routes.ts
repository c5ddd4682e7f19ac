/**
 * files-delete's routes (files.delete), declared: each one's table entry (method, path, permission,
 * envelope codes, event; `routesOf` names the function, this folder's) and its prose, which
 * lib/http/routes/table.ts collects. No validation library here: the serving shell reads the table
 * before a woken service answers its first probe. The prose is plain data only the document
 * generators read; no bundle keeps it. The routes' zod schemas are in schemas.ts beside it.
 * @module
 */
import { filesUpdate, GATES, JOB, LOST, MUTATION, routesOf, S } from '../../lib/http/routes/common-entries.ts';
import type { ProseTable, RouteDeclarations } from '../../lib/http/routes/types.ts';

export const routes = routesOf('files-delete', {
  'files.delete': {
    method: 'DELETE',
    path: `${S}/file`,
    permission: filesUpdate,
    errors: [...GATES, ...JOB, ...MUTATION, ...LOST],
    event: { type: 'dev.felis.files.delete', path: true },
  },
} as const satisfies RouteDeclarations);

export const prose = {
  'files.delete': {
    summary: 'A file, or a folder recursively, under the world lock.',
    answer: '`{path, status:"deleted", trash_id?}` — recursive; links removed, not followed; `trash_id` names the undo-trash record that keeps it',
  },
} satisfies ProseTable<typeof routes>;
