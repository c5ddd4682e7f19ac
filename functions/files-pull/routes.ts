/**
 * files-pull's routes (files.pull, files.pull.cancel): their table entries and prose (what a declaration holds,
 * and why: lib/http/routes/common-entries.ts).
 * @module
 */
import { filesUpdate, GATES, JOB, JSON_BODY, routesOf, S, SERVER } from '../../lib/http/routes/common-entries.ts';
import type { ProseTable, RouteDeclarations } from '../../lib/http/routes/types.ts';

export const routes = routesOf('files-pull', {
  'files.pull': {
    method: 'POST',
    path: `${S}/files/pull`,
    permission: filesUpdate,
    errors: [...GATES, ...JOB, ...JSON_BODY, [429, 'too_many_pulls']],
    event: { type: 'dev.felis.files.pull' },
  },
  'files.pull.cancel': {
    method: 'DELETE',
    path: `${S}/files/pull/:op`,
    permission: filesUpdate,
    errors: [...SERVER, [409, 'pull_not_running'], [503, 'pull_cancel_unavailable'], [503, 'files_unavailable']],
  },
} as const satisfies RouteDeclarations);

export const prose = {
  'files.pull': {
    summary:
      'Fetch a file from an http or https URL into a folder, in the background, through the SSRF guard; follow it in the ops listing. The download holds no world: other changes and a start go ahead meanwhile.',
    answer:
      "202 `{op}` — `path` an existing folder (`\"\"` the root); the file lands as `name`, or the name of the answer's Content-Disposition or the URL's path, never over an existing file; the guard (in the Job, before every connection and redirect) refuses special-purpose addresses and ports but 80/443 unless the operator allows them (`pull_refused` in the op). The download holds no world; once it ends the file is placed under the world's line, and the op is `running` until then (`file_exists` if the name was taken meanwhile, `not_stopped` if the server was started); at most 4 download at once per server (429 `too_many_pulls`)",
  },
  'files.pull.cancel': {
    summary: "Cancel a running pull through its Job's Pod; the op ends `pull_cancelled`, nothing placed.",
    answer: '202 `{op, status:"cancelling"}` — the op then ends `pull_cancelled` in the ops listing; 409 `pull_not_running` once it has ended',
  },
} satisfies ProseTable<typeof routes>;
