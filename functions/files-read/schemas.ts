/**
 * The zod schemas of files-read's routes (routes.ts): query, body and each success answer (why
 * apart from routes.ts: lib/http/routes/common-entries.ts).
 * @module
 */
import { onlyTrue, pathQuery, sha256Hex } from '../../lib/http/routes/common-schemas.ts';
import type { SchemaTable } from '../../lib/http/routes/types.ts';
import * as z from '../../lib/schema.ts';
import { described } from '../../lib/schema.ts';
import type { routes } from './routes.ts';

export const schemas = {
  'files.read': {
    query: z.extend(pathQuery, { decompress: onlyTrue('inflate a gzip file (its first bytes decide, not its name) and answer its text, at most 1 MiB of it') }),
    responses: {
      200: {
        description: "the file's bytes, base64",
        json: z.strictObject({
          path: z.string(),
          content: described(z.string(), 'base64'),
          sha256: described(sha256Hex, 'of the bytes on disk: send it back as expect_sha256'),
          content_sha256: described(sha256Hex, 'of what is sent'),
          truncated: described(z.optional(z.boolean()), 'with decompress=true only: the text is longer than the 1 MiB sent (both digests are then of the text sent)'),
        }),
      },
    },
  },
} as const satisfies SchemaTable<typeof routes>;
