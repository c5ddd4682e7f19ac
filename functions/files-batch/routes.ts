/**
 * files-batch's routes (files.delete_many, files.move, files.chmod): their table entries and prose (what a declaration holds,
 * and why: lib/http/routes/common-entries.ts).
 * @module
 */
import { filesUpdate, GATES, JOB, JSON_BODY, LOST, MUTATION, routesOf, S } from '../../lib/http/routes/common-entries.ts';
import type { ProseTable, RouteDeclarations } from '../../lib/http/routes/types.ts';

export const routes = routesOf('files-batch', {
  'files.delete_many': {
    method: 'POST',
    path: `${S}/files/delete`,
    permission: filesUpdate,
    errors: [...GATES, ...JOB, ...MUTATION, ...LOST, ...JSON_BODY, [409, 'batch_conflict']],
    event: { type: 'dev.felis.files.delete_many' },
  },
  'files.move': {
    method: 'POST',
    path: `${S}/files/move`,
    permission: filesUpdate,
    errors: [...GATES, ...JOB, ...MUTATION, ...LOST, ...JSON_BODY, [409, 'batch_conflict']],
    event: { type: 'dev.felis.files.move' },
  },
  'files.chmod': {
    method: 'POST',
    path: `${S}/files/chmod`,
    permission: filesUpdate,
    errors: [...GATES, ...JOB, ...MUTATION, ...LOST, ...JSON_BODY, [409, 'batch_conflict']],
    event: { type: 'dev.felis.files.chmod' },
  },
} as const satisfies RouteDeclarations);

export const prose = {
  'files.delete_many': {
    summary: 'Delete many files or folders in one Job, all or nothing, every one checked first, under the world lock.',
    answer:
      '`{done:[path…], failed:[{path, error:{code, message}}], trash_id?}` — 1–1000 paths; `trash_id` the one undo-trash record of what was deleted; every path is checked before anything changes, and the first bad one (or one the disk refuses) is answered with its `path` and nothing changed; all or nothing across any stop: journaled, so the next change of the world finishes or undoes an interrupted one (503 `outcome_unknown`, its `op`); `failed` only an item on another volume mounted in the world, or any item when the volume is too full to write the journal (then removed one by one)',
  },
  'files.move': {
    summary: 'Move or rename many files or folders in one Job without replacing, all or nothing, every one checked first, under the world lock.',
    answer:
      "`{done:[from…], failed:[{path, error}]}` — 1–1000 moves; never replaces; two moves onto one name, or of or into a folder another move takes, are 409 `batch_conflict`; a move that takes a relative link to a place from where it leads further above the world's root is 400 `bad_path`; nothing changed on any refusal, a move the disk refuses included; all or nothing across any stop, journaled as a many-file delete is; `failed` only when the volume is too full to write the journal (then moved one by one)",
  },
  'files.chmod': {
    summary: "Set many files' or folders' permission bits in one Job, every one checked first, under the world lock.",
    answer:
      '`{done:[path…], failed:[{path, error}]}` — 1–1000 files; `mode` three octal digits (`"644"`); links, special files and the withheld file are 400 `bad_path`; nothing changed on any refusal; not journaled: each mode is set in one step, so an interrupted one (503 `outcome_unknown`) may have set some, and running it again is safe',
  },
} satisfies ProseTable<typeof routes>;
