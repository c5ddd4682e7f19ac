/**
 * The zod schemas of files-mkdir's routes (routes.ts): query, body and each success answer (why
 * apart from routes.ts: lib/http/routes/common-entries.ts).
 * @module
 */
import { pathQuery, preferHeader, statusOf } from '../../lib/http/routes/common-schemas.ts';
import type { SchemaTable } from '../../lib/http/routes/types.ts';
import type { routes } from './routes.ts';

export const schemas = {
  'files.mkdir': { query: pathQuery, requestHeaders: preferHeader, responses: { 200: { description: 'created', json: statusOf('created') } } },
} as const satisfies SchemaTable<typeof routes>;
