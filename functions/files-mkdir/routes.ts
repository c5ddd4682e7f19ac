/**
 * files-mkdir's routes (files.mkdir): their table entries and prose (what a declaration holds,
 * and why: lib/http/routes/common-entries.ts).
 * @module
 */
import { filesUpdate, GATES, JOB, MUTATION, routesOf, S } from '../../lib/http/routes/common-entries.ts';
import type { ProseTable, RouteDeclarations } from '../../lib/http/routes/types.ts';

export const routes = routesOf('files-mkdir', {
  'files.mkdir': {
    method: 'POST',
    path: `${S}/files/mkdir`,
    permission: filesUpdate,
    errors: [...GATES, ...JOB, ...MUTATION],
    event: { type: 'dev.felis.files.mkdir', path: true },
  },
} as const satisfies RouteDeclarations);

export const prose = {
  'files.mkdir': {
    summary: 'One new folder, under the world lock.',
    answer: '`{path, status:"created"}` — one level',
  },
} satisfies ProseTable<typeof routes>;
