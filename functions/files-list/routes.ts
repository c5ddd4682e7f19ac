/**
 * files-list's routes (files.list): their table entries and prose (what a declaration holds,
 * and why: lib/http/routes/common-entries.ts).
 * @module
 */
import { BESIDE_GAME, filesGet, GATES, JOB, routesOf, S } from '../../lib/http/routes/common-entries.ts';
import type { ProseTable, RouteDeclarations } from '../../lib/http/routes/types.ts';

export const routes = routesOf('files-list', {
  'files.list': {
    method: 'GET',
    path: `${S}/files`,
    permission: filesGet,
    errors: [...GATES, ...BESIDE_GAME, ...JOB],
    event: { type: 'dev.felis.files.list', path: true, query: ['limit', 'after', 'q'] },
  },
} as const satisfies RouteDeclarations);

export const prose = {
  'files.list': {
    summary: "One folder's entries (empty path: the world's root), or a page of them with `limit`, `after` or `q`. No lock.",
    answer:
      "`{path, entries:[{name,size,is_dir,mod_time,mode,is_symlink}], truncated, next?, free_bytes, trash_bytes, world_state}` — empty `path` = the root; `free_bytes` the free space plus the undo trash's `trash_bytes` (a mutation takes them back when it needs room), `null` when unknown; `world_state` `running` when the server runs (a read beside the game may catch a file mid-save). Without `limit`/`after`/`q`: directory order, every entry; a folder of more than 2000 answers the paged form's first page of 2000 (byte order, `next`). With any: byte order of name, at most `limit` (default 1000, at most 5000) after `after`, names containing `q` in any case; `next` (the next page's `after`) when there are more",
  },
} satisfies ProseTable<typeof routes>;
