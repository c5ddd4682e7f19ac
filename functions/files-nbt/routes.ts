/**
 * files-nbt's routes (files.nbt, files.nbt.write): their table entries and prose (what a
 * declaration holds, and why: lib/http/routes/common-entries.ts).
 * @module
 */
import { BESIDE_GAME, filesGet, filesUpdate, GATES, JOB, JSON_BODY, MUTATION, routesOf, S } from '../../lib/http/routes/common-entries.ts';
import type { ProseTable, RouteDeclarations } from '../../lib/http/routes/types.ts';

export const routes = routesOf('files-nbt', {
  'files.nbt': {
    method: 'GET',
    path: `${S}/files/nbt`,
    permission: filesGet,
    errors: [...GATES, ...BESIDE_GAME, ...JOB, [400, 'nbt_invalid'], [413, 'too_large']],
    event: { type: 'dev.felis.files.nbt', path: true },
  },
  'files.nbt.write': {
    method: 'PUT',
    path: `${S}/files/nbt`,
    permission: filesUpdate,
    errors: [...GATES, ...JOB, ...MUTATION, ...JSON_BODY, [400, 'nbt_invalid'], [400, 'digest_mismatch'], [504, 'write_not_delivered']],
    event: { type: 'dev.felis.files.nbt.write', path: true },
  },
} as const satisfies RouteDeclarations);

export const prose = {
  'files.nbt': {
    summary: 'One NBT file (level.dat, playerdata, …) as typed JSON: every tag with its type, longs as decimal strings. No lock.',
    answer:
      '`{path, compression:"gzip"|"zlib"|"none", sha256, root:{type:"compound",name,value:{<name>:{type,value}}}, world_state}` — the file at most 8 MiB, decompressing to at most 32 MiB, its JSON at most 3 MiB; `sha256` of the bytes on disk (a write\'s `expect_sha256`); the form in docs/world-tools.md',
  },
  'files.nbt.write': {
    summary: 'Write an NBT document back, atomically, under the world lock; the old file goes to the undo trash.',
    answer:
      '`{path, status:"written"|"unchanged", sha256}` — body `{root, compression?, expect_sha256}`; a root that encodes to the file\'s own NBT in its own compression changes nothing (`unchanged`, the same bytes); the file written is at most 256 KiB',
  },
} satisfies ProseTable<typeof routes>;
