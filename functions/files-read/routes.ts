/**
 * files-read's routes (files.read), declared: each one's table entry (method, path, permission,
 * envelope codes, event; `routesOf` names the function, this folder's) and its prose, which
 * lib/http/routes/table.ts collects. No validation library here: the serving shell reads the table
 * before a woken service answers its first probe. The prose is plain data only the document
 * generators read; no bundle keeps it. The routes' zod schemas are in schemas.ts beside it.
 * @module
 */
import { BESIDE_GAME, filesGet, GATES, JOB, routesOf, S } from '../../lib/http/routes/common-entries.ts';
import type { ProseTable, RouteDeclarations } from '../../lib/http/routes/types.ts';

export const routes = routesOf('files-read', {
  'files.read': {
    method: 'GET',
    path: `${S}/file`,
    permission: filesGet,
    errors: [...GATES, ...BESIDE_GAME, ...JOB, [413, 'too_large'], [502, 'read_damaged']],
    event: { type: 'dev.felis.files.read', path: true },
  },
} as const satisfies RouteDeclarations);

export const prose = {
  'files.read': {
    summary: "A file's bytes, base64. No lock.",
    answer: '`{path, content (base64), sha256 (of the bytes on disk), content_sha256 (of what is sent)}` — at most 1 MiB',
  },
} satisfies ProseTable<typeof routes>;
