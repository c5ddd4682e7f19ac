/**
 * The zod schemas of files-mkdir's routes (routes.ts), under the same ids: query, body and each success
 * answer; lib/http/routes/schemas.ts collects them. Apart from routes.ts because they load the
 * validation library, which a woken service loads only after its first probe.
 * @module
 */
import { pathQuery, preferHeader, statusOf } from '../../lib/http/routes/common-schemas.ts';
import type { SchemaTable } from '../../lib/http/routes/types.ts';
import type { routes } from './routes.ts';

export const schemas = {
  'files.mkdir': { query: pathQuery, requestHeaders: preferHeader, responses: { 200: { description: 'created', json: statusOf('created') } } },
} as const satisfies SchemaTable<typeof routes>;
