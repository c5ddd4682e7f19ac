/**
 * The routes of files-read (files.read), declared: each one's entry in the route table (method, path,
 * permission, envelope codes, event; lib/http/routes/table.ts collects them) and its prose
 * (lib/http/routes/prose.ts collects it). Plain data, no validation library: the serving shell
 * reads the table before a woken service answers its first probe, and no bundle keeps the prose.
 * The zod schemas of the same routes are in schemas.ts beside it.
 * @module
 */
import { BESIDE_GAME, filesGet, GATES, JOB, S } from '../../lib/http/routes/common-entries.ts';
import type { ProseTable, RouteTable } from '../../lib/http/routes/types.ts';

export const routes = {
  'files.read': {
    fn: 'files-read',
    method: 'GET',
    path: `${S}/file`,
    permission: filesGet,
    errors: [...GATES, ...BESIDE_GAME, ...JOB, [413, 'too_large'], [502, 'read_damaged']],
    event: { type: 'dev.felis.files.read', path: true },
  },
} as const satisfies RouteTable;

export const prose = {
  'files.read': {
    summary: "A file's bytes, base64. No lock.",
    answer: '`{path, content (base64), sha256 (of the bytes on disk), content_sha256 (of what is sent)}` — at most 1 MiB',
  },
} satisfies ProseTable<typeof routes>;
