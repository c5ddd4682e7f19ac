/**
 * The zod schemas of files-unzip's routes (routes.ts): query, body and each success answer (why
 * apart from routes.ts: lib/http/routes/common-entries.ts).
 * @module
 */
import { opLocationHeader, opViewSchema, pathQuery, preferHeader } from '../../lib/http/routes/common-schemas.ts';
import type { SchemaTable } from '../../lib/http/routes/types.ts';
import * as z from '../../lib/schema.ts';
import { described } from '../../lib/schema.ts';
import type { routes } from './routes.ts';

export const schemas = {
  'files.unzip': {
    query: pathQuery,
    body: { json: z.strictObject({ overwrite: z.optional(z.boolean()), to: described(z.optional(z.string()), 'an existing folder to extract into') }) },
    requestHeaders: preferHeader,
    responses: { 202: { description: 'the op started (or the one an earlier delivery started)', json: z.strictObject({ op: opViewSchema }), headers: opLocationHeader } },
  },
} as const satisfies SchemaTable<typeof routes>;
