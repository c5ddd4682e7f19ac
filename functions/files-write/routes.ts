/**
 * files-write's routes (files.write), declared: each one's table entry (method, path, permission,
 * envelope codes, event; `routesOf` names the function, this folder's) and its prose, which
 * lib/http/routes/table.ts collects. No validation library here: the serving shell reads the table
 * before a woken service answers its first probe. The prose is plain data only the document
 * generators read; no bundle keeps it. The routes' zod schemas are in schemas.ts beside it.
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
