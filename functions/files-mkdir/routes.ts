/**
 * The routes of files-mkdir (files.mkdir), declared: each one's entry in the route table (method, path,
 * permission, envelope codes, event; lib/http/routes/table.ts collects them) and its prose
 * (lib/http/routes/prose.ts collects it). Plain data, no validation library: the serving shell
 * reads the table before a woken service answers its first probe, and no bundle keeps the prose.
 * The zod schemas of the same routes are in schemas.ts beside it.
 * @module
 */
import { filesUpdate, GATES, JOB, MUTATION, S } from '../../lib/http/routes/common-entries.ts';
import type { ProseTable, RouteTable } from '../../lib/http/routes/types.ts';

export const routes = {
  'files.mkdir': {
    fn: 'files-mkdir',
    method: 'POST',
    path: `${S}/files/mkdir`,
    permission: filesUpdate,
    errors: [...GATES, ...JOB, ...MUTATION],
    event: { type: 'dev.felis.files.mkdir', path: true },
  },
} as const satisfies RouteTable;

export const prose = {
  'files.mkdir': {
    summary: 'One new folder, under the world lock.',
    answer: '`{path, status:"created"}` — one level',
  },
} satisfies ProseTable<typeof routes>;
