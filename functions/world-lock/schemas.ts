/**
 * The zod schemas of world-lock's routes (routes.ts): query, body and each success answer (why
 * apart from routes.ts: lib/http/routes/common-entries.ts).
 * @module
 */
import type { SchemaTable } from '../../lib/http/routes/types.ts';
import * as z from '../../lib/schema.ts';
import { described } from '../../lib/schema.ts';
import type { routes } from './routes.ts';

export const schemas = {
  'lock.remove': {
    query: z.object({
      force: described(
        z.pipe(
          z.optional(z.enum(['true', 'false'], { error: 'force must be true or false' })),
          z.transform((v) => v === 'true'),
        ),
        '`true`: remove a lock younger than Grace too',
      ),
    }),
    responses: {
      200: {
        description: 'what was removed',
        json: z.strictObject({
          name: z.string(),
          removed: z.boolean(),
          lock: z.nullable(z.strictObject({ kind: z.string(), since: z.nullable(z.string()), value: z.string(), fresh: z.boolean() })),
        }),
      },
    },
  },
} as const satisfies SchemaTable<typeof routes>;
