/**
 * The routes of files-write (files.write), declared: each one's entry in the route table (method, path,
 * permission, envelope codes, event; `routesOf` adds the function, this folder's; table.ts of
 * lib/http/routes collects them) and its prose (collected there too). No validation
 * library: the serving shell reads the table before a woken service answers its first probe; and
 * no bundle keeps the prose, plain data only the document generators read. The zod schemas of the
 * same routes are in schemas.ts beside it.
 * @module
 */
import { filesUpdate, GATES, JOB, JSON_BODY, MUTATION, routesOf, S } from '../../lib/http/routes/common-entries.ts';
import type { ProseTable, RouteDeclarations } from '../../lib/http/routes/types.ts';

export const routes = routesOf('files-write', {
  'files.write': {
    method: 'PUT',
    path: `${S}/file`,
    permission: filesUpdate,
    errors: [...GATES, ...JOB, ...MUTATION, ...JSON_BODY, [400, 'digest_required'], [400, 'bad_digest'], [400, 'digest_mismatch'], [504, 'write_not_delivered']],
    event: { type: 'dev.felis.files.write', path: true },
  },
} as const satisfies RouteDeclarations);

export const prose = {
  'files.write': {
    summary: 'Replace or create a file, atomically, under the world lock.',
    answer: '`{path, status:"written", sha256}` — at most 256 KiB, atomic; with a job key the content is streamed to the write Job\'s Pod, in no cluster object (see docs/writes.md)',
  },
} satisfies ProseTable<typeof routes>;
