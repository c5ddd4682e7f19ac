/**
 * files-zip's routes (files.zip), declared: each one's table entry (method, path, permission,
 * envelope codes, event; `routesOf` names the function, this folder's) and its prose, which
 * lib/http/routes/table.ts collects. No validation library here: the serving shell reads the table
 * before a woken service answers its first probe. The prose is plain data only the document
 * generators read; no bundle keeps it. The routes' zod schemas are in schemas.ts beside it.
 * @module
 */
import { filesUpdate, GATES, JOB, JSON_BODY, MUTATION, routesOf, S } from '../../lib/http/routes/common-entries.ts';
import type { ProseTable, RouteDeclarations } from '../../lib/http/routes/types.ts';

export const routes = routesOf('files-zip', {
  'files.zip': {
    method: 'POST',
    path: `${S}/files/zip`,
    permission: filesUpdate,
    errors: [...GATES, ...JOB, ...MUTATION, ...JSON_BODY],
    event: { type: 'dev.felis.files.zip', path: true },
  },
} as const satisfies RouteDeclarations);

export const prose = {
  'files.zip': {
    summary: 'Pack a file or folder into a .zip next to it, in the background.',
    answer: '202 `{op}` — packs into `name` (a `.zip` file name) next to it, or a free name (`world.zip`, `world (2).zip`, …)',
  },
} satisfies ProseTable<typeof routes>;
