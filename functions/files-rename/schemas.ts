/**
 * The zod schemas of files-rename's routes (routes.ts): query, body and each success answer (why
 * apart from routes.ts: lib/http/routes/common-entries.ts).
 * @module
 */
import { pathQuery, preferHeader, statusOf } from '../../lib/http/routes/common-schemas.ts';
import type { SchemaTable } from '../../lib/http/routes/types.ts';
import * as z from '../../lib/schema.ts';
import { described } from '../../lib/schema.ts';
import type { routes } from './routes.ts';

export const schemas = {
  'files.rename': {
    query: pathQuery,
    body: { json: z.strictObject({ to: described(z.optional(z.string()), 'the new path (required: absent or empty is 400 bad_request)') }) },
    requestHeaders: preferHeader,
    responses: { 200: { description: 'renamed', json: statusOf('renamed', { to: z.string() }) } },
  },
} as const satisfies SchemaTable<typeof routes>;
