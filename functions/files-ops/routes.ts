/**
 * files-ops's routes (files.ops), declared: each one's table entry (method, path, permission,
 * envelope codes, event; `routesOf` names the function, this folder's) and its prose, which
 * lib/http/routes/table.ts collects. No validation library here: the serving shell reads the table
 * before a woken service answers its first probe. The prose is plain data only the document
 * generators read; no bundle keeps it. The routes' zod schemas are in schemas.ts beside it.
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
