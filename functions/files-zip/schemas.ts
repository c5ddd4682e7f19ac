/**
 * The zod schemas of files-zip's routes (routes.ts): query, body and each success answer (why
 * apart from routes.ts: lib/http/routes/common-entries.ts).
 * @module
 */
import { opLocationHeader, opViewSchema, pathQuery, preferHeader } from '../../lib/http/routes/common-schemas.ts';
import type { SchemaTable } from '../../lib/http/routes/types.ts';
import * as z from '../../lib/schema.ts';
import { described } from '../../lib/schema.ts';
import type { routes } from './routes.ts';

export const schemas = {
  'files.zip': {
    query: pathQuery,
    body: { json: z.strictObject({ name: described(z.optional(z.string()), 'a new `.zip` file name next to the path, by the name rule (docs/routes.md, Names): else 400 `bad_name`') }) },
    requestHeaders: preferHeader,
    responses: { 202: { description: 'the op started (or the one an earlier delivery started)', json: z.strictObject({ op: opViewSchema }), headers: opLocationHeader } },
  },
} as const satisfies SchemaTable<typeof routes>;
