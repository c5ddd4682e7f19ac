/**
 * The zod schemas of files-compress's routes (routes.ts): query, body and each success answer (why
 * apart from routes.ts: lib/http/routes/common-entries.ts).
 * @module
 */
import { itemPath, items, opLocationHeader, opViewSchema, preferHeader } from '../../lib/http/routes/common-schemas.ts';
import type { SchemaTable } from '../../lib/http/routes/types.ts';
import { PACK_FORMATS } from '../../lib/protocol/pack-format.ts';
import * as z from '../../lib/schema.ts';
import { described } from '../../lib/schema.ts';
import type { routes } from './routes.ts';

export const schemas = {
  'files.compress': {
    body: {
      json: z.strictObject({
        paths: described(items(itemPath('a path'), 'paths'), 'files and folders in one folder (not the root); the archive goes into that folder'),
        format: z.enum(PACK_FORMATS, { error: `format must be one of ${PACK_FORMATS.join(', ')}` }),
        name: described(
          z.optional(z.string({ error: 'name must be a string' })),
          "the archive's new file name by the name rule (docs/routes.md, Names), with the format's ending, else 400 `bad_name`; default `archive-<UTC yyyy-mm-ddThhmmss>.<ending>`",
        ),
      }),
    },
    requestHeaders: preferHeader,
    responses: { 202: { description: 'the op started (or the one an earlier delivery started)', json: z.strictObject({ op: opViewSchema }), headers: opLocationHeader } },
  },
} as const satisfies SchemaTable<typeof routes>;
