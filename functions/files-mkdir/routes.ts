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
    event: { type: 'dev.felis.files.mkdir', path: true, query: ['parents'] },
  },
} as const satisfies RouteDeclarations);

export const prose = {
  'files.mkdir': {
    summary: 'One new folder (with `parents=true`, its missing parents too), under the world lock.',
    answer:
      '`{path, status:"created"}` — one level: a missing parent is 404 (`folder a/b does not exist`); `?parents=true` (beside `path`) makes the missing folders first, and a folder already at `path` is then 200 (mkdir -p)',
  },
} satisfies ProseTable<typeof routes>;
