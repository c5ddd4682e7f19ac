/**
 * files-search's routes (files.search): their table entries and prose (what a declaration holds,
 * and why: lib/http/routes/common-entries.ts).
 * @module
 */
import { BESIDE_GAME, filesGet, GATES, JOB, routesOf, S } from '../../lib/http/routes/common-entries.ts';
import type { ProseTable, RouteDeclarations } from '../../lib/http/routes/types.ts';

export const routes = routesOf('files-search', {
  'files.search': {
    method: 'GET',
    path: `${S}/files/search`,
    permission: filesGet,
    errors: [...GATES, ...BESIDE_GAME, ...JOB, [400, 'bad_request']],
    event: { type: 'dev.felis.files.search', path: true, query: ['q', 'limit'] },
  },
} as const satisfies RouteDeclarations);

export const prose = {
  'files.search': {
    summary: 'Entries below a folder, at any depth, whose name contains `q` or matches it as a glob (`*`, `?`), any case. No lock.',
    answer:
      '`{path, q, matches:[{path,name,size,is_dir,mod_time}], truncated, scanned}` — in byte order of path; at most `limit` (default 200, at most 1000) matches and 5 s of walking, `truncated` when it stopped early; links are never descended',
  },
} satisfies ProseTable<typeof routes>;
