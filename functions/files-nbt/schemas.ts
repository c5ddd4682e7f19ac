/**
 * The zod schemas of files-nbt's routes (routes.ts): query, body and each success answer (why
 * apart from routes.ts: lib/http/routes/common-entries.ts). A tag nests without end, which the
 * document cannot spell (it has no recursive schemas): the root's `value` is an object of tags,
 * each checked by the route itself (nbt-encode.ts), which names the bad one's path.
 * @module
 */
import { pathQuery, preferHeader, sha256Hex } from '../../lib/http/routes/common-schemas.ts';
import type { SchemaTable } from '../../lib/http/routes/types.ts';
import * as z from '../../lib/schema.ts';
import { described } from '../../lib/schema.ts';
import { NBT_COMPRESSIONS } from './op.ts';
import type { routes } from './routes.ts';

const compression = z.enum(NBT_COMPRESSIONS);
const tag = described(
  z.object({ type: z.string(), value: z.unknown() }),
  'a tag: `type` one of byte, short, int, long, float, double, byteArray, string, list, compound, intArray, longArray; `value` a number (long: a decimal string; float, double: also "NaN", "Infinity", "-Infinity", "-0"), a string, an array (longArray: of decimal strings), a list `{type, value:[element values]}` or a compound (an object of named tags)',
);
const root = described(
  z.object({ type: z.literal('compound'), name: z.string(), value: z.record(z.string(), tag) }),
  'the root compound: its name ("" in the files the game writes) and its named tags, in file order',
);

export const schemas = {
  'files.nbt': {
    query: pathQuery,
    responses: {
      200: {
        description: 'the file as typed NBT',
        json: z.strictObject({
          path: z.string(),
          compression: described(compression, 'how the file is stored'),
          sha256: described(sha256Hex, "of the file's bytes on disk: a write's `expect_sha256`"),
          root,
          world_state: described(z.enum(['stopped', 'running']), '`running`: the server was running, so the game may have been writing the file'),
        }),
      },
    },
  },
  'files.nbt.write': {
    query: pathQuery,
    body: {
      json: z.strictObject({
        root: described(z.looseObject({}), 'the document, in the form a read answers (`{type:"compound", name, value}`); each tag is checked by the route, which names a bad one by its path'),
        compression: described(z.optional(compression), 'how to store it; absent: as the file is stored now'),
        expect_sha256: described(z.string(), 'the `sha256` the read answered: written only if the file still has it (409 file_changed otherwise)'),
      }),
    },
    requestHeaders: preferHeader,
    responses: {
      200: {
        description: 'written, or nothing to write',
        json: z.strictObject({
          path: z.string(),
          status: described(z.enum(['written', 'unchanged']), '`unchanged`: the document encodes to what the file holds, in the compression it has; the file was left as it is'),
          sha256: described(sha256Hex, 'of the file as it now is'),
        }),
      },
    },
  },
} as const satisfies SchemaTable<typeof routes>;
