/**
 * The zod schemas of start's routes (routes.ts), under the same ids: query, body and each success
 * answer; lib/http/routes/schemas.ts collects them. Apart from routes.ts because they load the
 * validation library, which a woken service loads only after its first probe.
 * @module
 */
import type { SchemaTable } from '../../lib/http/routes/types.ts';
import * as z from '../../lib/schema.ts';
import type { routes } from './routes.ts';

const serverView = z.strictObject({ name: z.string(), desiredState: z.string(), phase: z.string(), ready: z.boolean() });

export const schemas = {
  'server.start': { responses: { 202: { description: 'asked to run', json: serverView } } },
  'server.stop': { responses: { 202: { description: 'asked to stop', json: serverView } } },
} as const satisfies SchemaTable<typeof routes>;
