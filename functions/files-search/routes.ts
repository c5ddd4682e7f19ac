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
    event: { type: 'dev.felis.files.search', path: true, query: ['q', 'content', 'limit'] },
  },
} as const satisfies RouteDeclarations);

export const prose = {
  'files.search': {
    summary:
      'Entries below a folder, at any depth, whose name contains `q` or matches it as a glob (`*`, `?`), any case; with `content`, the lines of its text files holding that literal text (ASCII letters in any case), in files named as `q` when given. No lock.',
    answer:
      '`{path, q, matches:[{path,name,size,is_dir,mod_time}], truncated, scanned}` — in byte order of path; at most `limit` (default 200, at most 1000) matches and 5 s of walking, `truncated` when it stopped early; links are never descended. With `content` (1–256 bytes, no line break): `{path, q?, content, matches:[{path,line,column,text}], truncated, scanned_files, scanned_bytes, world_state}` — one match per line, in walk order; `column` in bytes, `text` at most 512 bytes of the line around the match; binary files (a NUL in the first 8 KiB) skipped, links never followed, the withheld file never opened, `server.properties` searched as a read shows it (redacted); `truncated` when `limit`, 5 s or 2 GiB read stopped it, or a text file over 8 MiB was skipped',
  },
} satisfies ProseTable<typeof routes>;
