/**
 * The zod schemas of holder's routes (routes.ts): query, body and each success answer (why
 * apart from routes.ts: lib/http/routes/common-entries.ts).
 * @module
 */
import type { SchemaTable } from '../../lib/http/routes/types.ts';
import * as z from '../../lib/schema.ts';
import { described } from '../../lib/schema.ts';
import type { routes } from './routes.ts';

const holderFields = {
  held: z.boolean(),
  kind: described(z.optional(z.string()), 'what holds it: backup, restore, file-write, …'),
  source: z.optional(z.enum(['job', 'lock'])),
  job: z.optional(z.string()),
  since: z.optional(z.string()),
  stale_lock: described(z.optional(z.string()), 'a lock annotation present but no longer holding'),
};

export const schemas = {
  'holder.get': { responses: { 200: { description: "what holds the server's world", json: z.strictObject(holderFields) } } },
  'holders.list': {
    responses: { 200: { description: 'every held server in the namespace', json: z.strictObject({ holders: z.array(z.strictObject({ server: z.string(), ...holderFields })) }) } },
  },
} as const satisfies SchemaTable<typeof routes>;
