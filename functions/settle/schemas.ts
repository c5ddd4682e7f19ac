/**
 * The zod schemas of settle's routes (routes.ts): query, body and each success answer (why
 * apart from routes.ts: lib/http/routes/common-entries.ts).
 * @module
 */
import type { SchemaTable } from '../../lib/http/routes/types.ts';
import * as z from '../../lib/schema.ts';
import type { routes } from './routes.ts';

export const schemas = {
  'restore.settle': {
    responses: {
      200: {
        description: 'every chain the pass looked at, and every pull it placed or left waiting',
        json: z.strictObject({
          // Both from the route; a source's event answers the part it started (a backup Job: chains; a pull Job: pulls).
          chains: z.optional(
            z.array(
              z.strictObject({
                job: z.string(),
                server: z.string(),
                state: z.enum(['started', 'abandoned', 'pending']),
                reason: z.optional(z.string()),
                message: z.optional(z.string()),
                error: z.optional(z.string()),
              }),
            ),
          ),
          pulls: z.optional(
            z.array(
              z.strictObject({
                job: z.string(),
                server: z.string(),
                op: z.string(),
                state: z.enum(['placed', 'failed', 'pending']),
                to: z.optional(z.string()),
                code: z.optional(z.string()),
                error: z.optional(z.string()),
              }),
            ),
          ),
        }),
      },
    },
  },
} as const satisfies SchemaTable<typeof routes>;
