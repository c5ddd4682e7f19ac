/**
 * files-usage's routes (files.usage): their table entries and prose (what a declaration holds,
 * and why: lib/http/routes/common-entries.ts).
 * @module
 */
import { BESIDE_GAME, filesGet, GATES, JOB, routesOf, S } from '../../lib/http/routes/common-entries.ts';
import type { ProseTable, RouteDeclarations } from '../../lib/http/routes/types.ts';

export const routes = routesOf('files-usage', {
  'files.usage': {
    method: 'GET',
    path: `${S}/files/usage`,
    permission: filesGet,
    errors: [...GATES, ...BESIDE_GAME, ...JOB],
    event: { type: 'dev.felis.files.usage', path: true, query: ['depth', 'top'] },
  },
} as const satisfies RouteDeclarations);

export const prose = {
  'files.usage': {
    summary:
      'What a folder holds on disk (empty path: the whole world): its totals, its entries to `depth` and its largest files, largest first. No lock. A browse Pod already serving the world answers it, giving a kept answer again for up to 10 s while no folder below the path changed.',
    answer:
      '`{path, bytes, apparent_bytes, files, dirs, children:[{name,bytes,apparent_bytes,files,is_dir,children?}], largest:[{path,bytes,apparent_bytes}], capacity_bytes, free_bytes, trash_bytes, scanned_at, truncated, world_state}` — `bytes` allocated on disk, `apparent_bytes` the sizes; hard links once, links never followed; the undo trash and working files only in `trash_bytes`; `children` to `depth` (1–3, default 1), `largest` the `top` (1–100, default 10) largest files; `truncated` when the 20 s walk stopped early',
  },
} satisfies ProseTable<typeof routes>;
