/**
 * The zod schemas of files-read's routes (routes.ts): query, body and each success answer (why
 * apart from routes.ts: lib/http/routes/common-entries.ts).
 * @module
 */
import { pathQuery, sha256Hex } from '../../lib/http/routes/common-schemas.ts';
import type { SchemaTable } from '../../lib/http/routes/types.ts';
import * as z from '../../lib/schema.ts';
import { described } from '../../lib/schema.ts';
import type { routes } from './routes.ts';

export const schemas = {
  'files.read': {
    query: pathQuery,
    responses: {
      200: {
        description: "the file's bytes, base64",
        json: z.strictObject({
          path: z.string(),
          content: described(z.string(), 'base64'),
          sha256: described(sha256Hex, 'of the bytes on disk: send it back as expect_sha256'),
          content_sha256: described(sha256Hex, 'of what is sent'),
        }),
      },
    },
  },
} as const satisfies SchemaTable<typeof routes>;
