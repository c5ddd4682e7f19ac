/**
 * The zod schemas of files-ops's routes (routes.ts): query, body and each success answer (why
 * apart from routes.ts: lib/http/routes/common-entries.ts).
 * @module
 */
import { opViewSchema } from '../../lib/http/routes/common-schemas.ts';
import type { SchemaTable } from '../../lib/http/routes/types.ts';
import * as z from '../../lib/schema.ts';
import type { routes } from './routes.ts';

export const schemas = {
  'files.ops': { responses: { 200: { description: 'newest first, at most ten', json: z.strictObject({ ops: z.array(opViewSchema) }) } } },
} as const satisfies SchemaTable<typeof routes>;
