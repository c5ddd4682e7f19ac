/**
 * The routes of files-rename (files.rename), declared: each one's entry in the route table (method, path,
 * permission, envelope codes, event; `routesOf` adds the function, this folder's; table.ts of
 * lib/http/routes collects them) and its prose (collected there too). No validation
 * library: the serving shell reads the table before a woken service answers its first probe; and
 * no bundle keeps the prose, plain data only the document generators read. The zod schemas of the
 * same routes are in schemas.ts beside it.
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
