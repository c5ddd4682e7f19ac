/**
 * The zod schemas of start's routes (routes.ts): query, body and each success answer (why
 * apart from routes.ts: lib/http/routes/common-entries.ts).
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
