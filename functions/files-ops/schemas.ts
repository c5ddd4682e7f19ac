/**
 * The zod schemas of files-ops's routes (routes.ts): query, body and each success answer (why
 * apart from routes.ts: lib/http/routes/common-entries.ts).
 * @module
 */
import { opViewSchema, wholeNumberText } from '../../lib/http/routes/common-schemas.ts';
import type { SchemaTable } from '../../lib/http/routes/types.ts';
import { DEFAULT_OPS, MAX_OPS, OP_ID_SHAPE } from '../../lib/protocol/ops-page.ts';
import * as z from '../../lib/schema.ts';
import { described } from '../../lib/schema.ts';
import type { routes } from './routes.ts';

/** A whole number from 1 to MAX_OPS, written plainly (no sign, no leading zero). */
const OPS_LIMIT = /^(?:[1-9][0-9]?|100)$/;
const LIMIT_MESSAGE = `the ?limit= query parameter must be a whole number from 1 to ${MAX_OPS}`;
const AFTER_MESSAGE = "the ?after= query parameter must be an op id (an `id` of the listing: letters, digits, '-', '_' or '.', at most 63)";

export const schemas = {
  'files.ops': {
    query: z.object({
      limit: described(z.optional(wholeNumberText(OPS_LIMIT, 1, MAX_OPS, LIMIT_MESSAGE)), `at most this many ops (1–${MAX_OPS}, default ${DEFAULT_OPS})`),
      after: described(
        z.optional(z.string().check(z.refine((v) => v === '' || OP_ID_SHAPE.test(v), { error: AFTER_MESSAGE }))),
        "the ops older than the op of this id (the previous page's `next`); empty or absent: from the newest",
      ),
    }),
    responses: {
      200: {
        description: 'newest first',
        json: z.strictObject({
          ops: z.array(opViewSchema),
          next: described(z.optional(z.string()), "more ops: the last id of this page, the next page's `after`"),
        }),
      },
    },
  },
  'files.op': { responses: { 200: { description: 'the op, as the listing shows it', json: z.strictObject({ op: opViewSchema }) } } },
} as const satisfies SchemaTable<typeof routes>;
