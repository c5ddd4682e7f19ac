/**
 * files-ops's routes (files.ops): their table entries and prose (what a declaration holds,
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
