/**
 * files-zip's routes (files.zip): their table entries and prose (what a declaration holds,
 * and why: lib/http/routes/common-entries.ts).
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
