/**
 * The routes of files-mkdir (files.mkdir), declared: each one's entry in the route table (method, path,
 * permission, envelope codes, event; `routesOf` adds the function, this folder's; table.ts of
 * lib/http/routes collects them) and its prose (collected there too). No validation
 * library: the serving shell reads the table before a woken service answers its first probe; and
 * no bundle keeps the prose, plain data only the document generators read. The zod schemas of the
 * same routes are in schemas.ts beside it.
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
