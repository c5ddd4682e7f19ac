/**
 * files-delete's routes (files.delete): their table entries and prose (what a declaration holds,
 * and why: lib/http/routes/common-entries.ts).
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
