/**
 * files-copy's routes (files.copy): their table entries and prose (what a declaration holds,
 * and why: lib/http/routes/common-entries.ts).
 * @module
 */
import { filesUpdate, GATES, JOB, JSON_BODY, MUTATION, routesOf, S } from '../../lib/http/routes/common-entries.ts';
import type { ProseTable, RouteDeclarations } from '../../lib/http/routes/types.ts';

export const routes = routesOf('files-copy', {
  'files.copy': {
    method: 'POST',
    path: `${S}/files/copy`,
    permission: filesUpdate,
    errors: [...GATES, ...JOB, ...MUTATION, ...JSON_BODY],
    event: { type: 'dev.felis.files.copy', path: true },
  },
} as const satisfies RouteDeclarations);

export const prose = {
  'files.copy': {
    summary: 'Copy a file or folder, all or nothing; a regular file up to 64 MiB at once, anything else in the background.',
    answer:
      '`{path, to, status:"copied", sha256}` for a regular file up to 64 MiB; else 202 `{op}` (op `copy` in `files/ops`) — to `to` (must not exist; its folder must) or beside it as `<name> copy<.ext>`, `<name> copy 2<.ext>`, …; links that stay inside are copied as links, other links, special files and the withheld file are left out',
  },
} satisfies ProseTable<typeof routes>;
