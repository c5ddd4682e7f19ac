/**
 * files-read's routes (files.read): their table entries and prose (what a declaration holds,
 * and why: lib/http/routes/common-entries.ts).
 * @module
 */
import { BESIDE_GAME, filesGet, GATES, JOB, routesOf, S } from '../../lib/http/routes/common-entries.ts';
import type { ProseTable, RouteDeclarations } from '../../lib/http/routes/types.ts';

export const routes = routesOf('files-read', {
  'files.read': {
    method: 'GET',
    path: `${S}/file`,
    permission: filesGet,
    errors: [...GATES, ...BESIDE_GAME, ...JOB, [400, 'gzip_invalid'], [413, 'too_large'], [502, 'read_damaged']],
    event: { type: 'dev.felis.files.read', path: true },
  },
} as const satisfies RouteDeclarations);

export const prose = {
  'files.read': {
    summary: "A file's bytes, base64; with `decompress=true` a gzip file's text. No lock.",
    answer:
      '`{path, content (base64), sha256 (of the bytes on disk), content_sha256 (of what is sent)}` — at most 1 MiB; with `decompress=true`: the inflated text, at most 1 MiB of it, both digests of that text, and `truncated` (it went on past 1 MiB)',
  },
} satisfies ProseTable<typeof routes>;
