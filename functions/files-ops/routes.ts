/**
 * The routes of files-ops (files.ops), declared: each one's entry in the route table (method, path,
 * permission, envelope codes, event; `routesOf` adds the function, this folder's; table.ts of
 * lib/http/routes collects them) and its prose (collected there too). No validation
 * library: the serving shell reads the table before a woken service answers its first probe; and
 * no bundle keeps the prose, plain data only the document generators read. The zod schemas of the
 * same routes are in schemas.ts beside it.
 * @module
 */
import { filesGet, routesOf, S, SERVER } from '../../lib/http/routes/common-entries.ts';
import type { ProseTable, RouteDeclarations } from '../../lib/http/routes/types.ts';

export const routes = routesOf('files-ops', {
  'files.ops': {
    method: 'GET',
    path: `${S}/files/ops`,
    permission: filesGet,
    errors: [...SERVER, [503, 'files_unavailable']],
    event: { type: 'dev.felis.files.ops' },
  },
} as const satisfies RouteDeclarations);

export const prose = {
  'files.ops': {
    summary: "The server's ten newest background ops, newest first; works while the server runs.",
    answer: '`{ops:[…]}` — op views, see Background ops',
  },
} satisfies ProseTable<typeof routes>;
