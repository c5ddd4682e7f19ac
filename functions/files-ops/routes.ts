/**
 * files-ops's routes (files.ops, files.op): their table entries and prose (what a declaration holds,
 * and why: lib/http/routes/common-entries.ts).
 * @module
 */
import { filesGet, routesOf, S, SERVER } from '../../lib/http/routes/common-entries.ts';
import type { ProseTable, RouteDeclarations } from '../../lib/http/routes/types.ts';

export const routes = routesOf('files-ops', {
  'files.ops': {
    method: 'GET',
    path: `${S}/files/ops`,
    permission: filesGet,
    errors: [...SERVER, [400, 'bad_request'], [503, 'files_unavailable']],
    event: { type: 'dev.felis.files.ops', query: ['limit', 'after'] },
  },
  'files.op': {
    method: 'GET',
    path: `${S}/files/ops/:id`,
    permission: filesGet,
    errors: [...SERVER, [400, 'bad_request'], [404, 'op_not_found'], [503, 'files_unavailable']],
    event: { type: 'dev.felis.files.op', id: true },
  },
} as const satisfies RouteDeclarations);

export const prose = {
  'files.ops': {
    summary: "The server's background ops, newest first, a page at a time; works while the server runs.",
    answer:
      "`{ops:[…], next?}` — op views, see Background ops; at most `limit` (1–100, default 10) after the op `after` (400 `bad_request` when no op has that id); `next` (the next page's `after`) when there are more",
  },
  'files.op': {
    summary: 'One background op of the server, by the id its 202 gave (and its `Location` names).',
    answer: '`{op}` — the op view, as the listing shows it; 404 `op_not_found` when no op of this server has that id',
  },
} satisfies ProseTable<typeof routes>;
