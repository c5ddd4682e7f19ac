/**
 * files-mkdir's routes (files.mkdir), declared: each one's table entry (method, path, permission,
 * envelope codes, event; `routesOf` names the function, this folder's) and its prose, which
 * lib/http/routes/table.ts collects. No validation library here: the serving shell reads the table
 * before a woken service answers its first probe. The prose is plain data only the document
 * generators read; no bundle keeps it. The routes' zod schemas are in schemas.ts beside it.
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
