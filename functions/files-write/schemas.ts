/**
 * The zod schemas of files-write's routes (routes.ts): query, body and each success answer (why
 * apart from routes.ts: lib/http/routes/common-entries.ts).
 * @module
 */
import { pathQuery, preferHeader, sha256Hex, statusOf } from '../../lib/http/routes/common-schemas.ts';
import type { SchemaTable } from '../../lib/http/routes/types.ts';
import { writeBodySchema } from '../../lib/http/write-body.ts';
import * as z from '../../lib/schema.ts';
import { described } from '../../lib/schema.ts';
import type { routes } from './routes.ts';

export const schemas = {
  'files.write': {
    query: pathQuery,
    body: {
      // Required in fact, optional to the schema: the route refuses a missing one with its own code (write-body.ts).
      json: z.extend(writeBodySchema, {
        content: described(writeBodySchema.shape.content, 'base64 of the new bytes (required: absent or null is 400 bad_request)'),
        content_sha256: described(writeBodySchema.shape.content_sha256, 'SHA-256 of the new bytes (required: absent is 400 digest_required)'),
        expect_sha256: described(writeBodySchema.shape.expect_sha256, 'write only if the file on disk still has this SHA-256 (409 file_changed otherwise)'),
        create_only: described(writeBodySchema.shape.create_only, 'write only if no file is there (409 file_exists otherwise)'),
      }),
    },
    requestHeaders: preferHeader,
    responses: { 200: { description: 'written', json: statusOf('written', { sha256: sha256Hex }) } },
  },
} as const satisfies SchemaTable<typeof routes>;
