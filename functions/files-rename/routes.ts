/**
 * files-rename's routes (files.rename): their table entries and prose (what a declaration holds,
 * and why: lib/http/routes/common-entries.ts).
 * @module
 */
import { filesUpdate, GATES, JOB, JSON_BODY, MUTATION, routesOf, S } from '../../lib/http/routes/common-entries.ts';
import type { ProseTable, RouteDeclarations } from '../../lib/http/routes/types.ts';

export const routes = routesOf('files-rename', {
  'files.rename': {
    method: 'POST',
    path: `${S}/files/rename`,
    permission: filesUpdate,
    errors: [...GATES, ...JOB, ...MUTATION, ...JSON_BODY],
    event: { type: 'dev.felis.files.rename', path: true },
  },
} as const satisfies RouteDeclarations);

export const prose = {
  'files.rename': {
    summary: 'Move without replacing, under the world lock.',
    answer:
      '`{path, to, status:"renamed"}` — never replaces; never takes a relative link (the entry or one inside it) to a place from where it leads further above the world\'s root (400 `bad_path` naming the link)',
  },
} satisfies ProseTable<typeof routes>;
