/**
 * files-compress's routes (files.compress): their table entries and prose (what a declaration holds,
 * and why: lib/http/routes/common-entries.ts).
 * @module
 */
import { filesUpdate, GATES, JOB, JSON_BODY, MUTATION, routesOf, S } from '../../lib/http/routes/common-entries.ts';
import type { ProseTable, RouteDeclarations } from '../../lib/http/routes/types.ts';

export const routes = routesOf('files-compress', {
  'files.compress': {
    method: 'POST',
    path: `${S}/files/compress`,
    permission: filesUpdate,
    errors: [...GATES, ...JOB, ...MUTATION, ...JSON_BODY, [400, 'mixed_folders']],
    event: { type: 'dev.felis.files.compress' },
  },
} as const satisfies RouteDeclarations);

export const prose = {
  'files.compress': {
    summary: 'Pack files and folders of one folder into a zip, tar.gz, tar.xz or tar.zst in that folder, in the background.',
    answer:
      "202 `{op}` (op `compress`, path the folder) — 1–1000 `paths`, all in one folder (else 400 `mixed_folders`), none twice, not the root; `format` `zip`, `tar.gz`, `tar.xz` or `tar.zst`; the archive is `name` (a file name with the format's ending) or `archive-<UTC yyyy-mm-ddThhmmss>.<ending>`, never over an existing file (the op fails `file_exists`); links, special files and the withheld file left out",
  },
} satisfies ProseTable<typeof routes>;
