/**
 * files-write's routes (files.write): their table entries and prose (what a declaration holds,
 * and why: lib/http/routes/common-entries.ts).
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
    answer:
      "`{path, status:\"written\", sha256}` — at most 1 MiB (what a read shows), atomic; with a job key the content is streamed to the write Job's Pod, in no cluster object; without one it rides in the Job's env, Felis's way, at most 256 KiB (413 saying so; see docs/writes.md)",
  },
} satisfies ProseTable<typeof routes>;
