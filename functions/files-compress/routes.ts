/**
 * files-compress's routes (files.compress), declared: each one's table entry (method, path, permission,
 * envelope codes, event; `routesOf` names the function, this folder's) and its prose, which
 * lib/http/routes/table.ts collects. No validation library here: the serving shell reads the table
 * before a woken service answers its first probe. The prose is plain data only the document
 * generators read; no bundle keeps it. The routes' zod schemas are in schemas.ts beside it.
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
