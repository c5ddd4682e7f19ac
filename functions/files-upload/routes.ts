/**
 * files-upload's routes (files.upload): their table entries and prose (what a declaration holds,
 * and why: lib/http/routes/common-entries.ts).
 * @module
 */
import { filesUpdate, GATES, JOB, MUTATION, RAW_BODY, RECEIVER, routesOf, S } from '../../lib/http/routes/common-entries.ts';
import type { ProseTable, RouteDeclarations } from '../../lib/http/routes/types.ts';

export const routes = routesOf('files-upload', {
  'files.upload': {
    method: 'PUT',
    path: `${S}/files/upload`,
    permission: filesUpdate,
    errors: [...GATES, ...JOB, ...MUTATION, ...RAW_BODY, ...RECEIVER],
  },
} as const satisfies RouteDeclarations);

export const prose = {
  'files.upload': {
    summary: 'One raw body of at most 64 MiB, streamed to a receiver Job and placed atomically.',
    answer:
      '`{path, status:"uploaded", sha256, size}` — raw body ≤ 64 MiB with `Content-Length` and `Content-Digest: sha-256=:<base64>:`, streamed to a receiver Job, placed atomically; `?parents=true` (beside `path`) makes the missing folders first',
  },
} satisfies ProseTable<typeof routes>;
