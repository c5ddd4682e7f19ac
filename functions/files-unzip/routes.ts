/**
 * files-unzip's routes (files.unzip): their table entries and prose (what a declaration holds,
 * and why: lib/http/routes/common-entries.ts).
 * @module
 */
import { filesUpdate, GATES, JOB, JSON_BODY, MUTATION, routesOf, S } from '../../lib/http/routes/common-entries.ts';
import type { ProseTable, RouteDeclarations } from '../../lib/http/routes/types.ts';

export const routes = routesOf('files-unzip', {
  'files.unzip': {
    method: 'POST',
    path: `${S}/files/unzip`,
    permission: filesUpdate,
    errors: [...GATES, ...JOB, ...MUTATION, ...JSON_BODY],
    event: { type: 'dev.felis.files.unzip', path: true },
  },
} as const satisfies RouteDeclarations);

export const prose = {
  'files.unzip': {
    summary: 'Extract an archive (.zip, .tar in any compression, .7z, .rar) or a single .gz/.bz2/.xz/.zst file in the background; follow it in the ops listing.',
    answer:
      "202 `{op}` — extracts in the background into the archive's folder, or into the existing folder `to`; `.zip`, `.tar`, `.tar.gz`/`.tgz`, `.tar.bz2`/`.tbz2`, `.tar.xz`/`.txz`, `.tar.zst`/`.tzst`, `.7z`, `.rar`, or a single `.gz`, `.bz2`, `.xz` or `.zst` file, extracted to its name without the ending (any case; the ending decides the format, the longest ending winning; anything else is 400 `bad_path` before any Job)",
  },
} satisfies ProseTable<typeof routes>;
