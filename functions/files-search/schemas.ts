/**
 * The zod schemas of files-search's routes (routes.ts): query, body and each success answer (why
 * apart from routes.ts: lib/http/routes/common-entries.ts).
 * @module
 */
import { entrySchema, wholeCount, wholeNumberText } from '../../lib/http/routes/common-schemas.ts';
import type { SchemaTable } from '../../lib/http/routes/types.ts';
import { SEARCH_BUDGET_MS, SEARCH_DEFAULT_LIMIT, SEARCH_MAX_LIMIT, SEARCH_MIN_QUERY } from '../../lib/protocol/limits.ts';
import * as z from '../../lib/schema.ts';
import { described } from '../../lib/schema.ts';
import type { routes } from './routes.ts';

const SEARCH_Q = `?q= needs at least ${SEARCH_MIN_QUERY} characters`;
const SEARCH_LIMIT = `?limit= must be a whole number from 1 to ${SEARCH_MAX_LIMIT}`;

export const schemas = {
  'files.search': {
    query: z.object({
      path: described(z.optional(z.string()), 'the folder to search below; empty or absent: the root'),
      q: described(
        z.string({ error: SEARCH_Q }).check(z.refine((q) => Array.from(q).length >= SEARCH_MIN_QUERY, { error: SEARCH_Q })),
        'a case-insensitive part of the name; with `*` (any run) or `?` (one character), a glob on the whole name',
      ),
      limit: described(
        z.optional(z.pipe(wholeNumberText(/^[0-9]{1,4}$/, 1, SEARCH_MAX_LIMIT, SEARCH_LIMIT), z.transform(Number))),
        `the most matches answered, 1–${SEARCH_MAX_LIMIT}; default ${SEARCH_DEFAULT_LIMIT}`,
      ),
    }),
    responses: {
      200: {
        description: 'the entries found, in byte order of path',
        json: z.strictObject({
          path: z.string(),
          q: z.string(),
          matches: z.array(z.strictObject({ path: described(z.string(), "from the world's root"), ...entrySchema.shape })),
          truncated: described(z.boolean(), `stopped early: more matches than \`limit\`, or ${SEARCH_BUDGET_MS / 1000} s of walking ran out`),
          scanned: described(wholeCount, 'entries looked at'),
        }),
      },
    },
  },
} as const satisfies SchemaTable<typeof routes>;
