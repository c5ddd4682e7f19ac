/**
 * The zod schemas of files-copy's routes (routes.ts): query, body and each success answer (why
 * apart from routes.ts: lib/http/routes/common-entries.ts).
 * @module
 */
import { opLocationHeader, opViewSchema, pathQuery, preferHeader, sha256Hex, statusOf } from '../../lib/http/routes/common-schemas.ts';
import type { SchemaTable } from '../../lib/http/routes/types.ts';
import * as z from '../../lib/schema.ts';
import { described } from '../../lib/schema.ts';
import type { routes } from './routes.ts';

export const schemas = {
  'files.copy': {
    query: pathQuery,
    body: { json: z.strictObject({ to: described(z.optional(z.string()), 'the new path (must not exist; its folder must); default: `<name> copy<.ext>` beside it') }) },
    requestHeaders: preferHeader,
    responses: {
      200: { description: 'a regular file up to 64 MiB, copied', json: statusOf('copied', { to: z.string(), sha256: described(sha256Hex, 'of the copy') }) },
      202: { description: 'anything else: the op started (or the one an earlier delivery started)', json: z.strictObject({ op: opViewSchema }), headers: opLocationHeader },
    },
  },
} as const satisfies SchemaTable<typeof routes>;
