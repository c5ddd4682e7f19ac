/**
 * The zod schemas of files-region's routes (routes.ts): query, body and each success answer (why
 * apart from routes.ts: lib/http/routes/common-entries.ts).
 * @module
 */
import { opLocationHeader, opViewSchema, pathQuery, preferHeader } from '../../lib/http/routes/common-schemas.ts';
import type { SchemaTable } from '../../lib/http/routes/types.ts';
import * as z from '../../lib/schema.ts';
import type { routes } from './routes.ts';

// The fields are told once, in the route's answer (routes.ts) and docs/world-tools.md: the document has a size budget.
const chunk = z.strictObject({
  x: z.number(),
  z: z.number(),
  sectors: z.number(),
  bytes: z.union([z.number(), z.null()]),
  timestamp: z.number(),
  compression: z.union([z.string(), z.null()]),
  external: z.boolean(),
  inhabited_ticks: z.union([z.number(), z.string(), z.null()]),
  error: z.optional(z.string()),
});
const pruneFile = z.strictObject({ path: z.string(), chunks_removed: z.number(), bytes_freed: z.number(), removed: z.boolean() });

export const schemas = {
  'files.region': {
    query: pathQuery,
    responses: {
      200: {
        description: 'the table',
        json: z.strictObject({
          path: z.string(),
          chunks: z.array(chunk),
          sectors_used: z.number(),
          sectors_free: z.number(),
          world_state: z.enum(['stopped', 'running']),
        }),
      },
    },
  },
  'files.region.prune': {
    body: {
      json: z.strictObject({
        path: z.string({ error: 'path: a world folder or its region folder is required' }),
        inhabited_below_ticks: z.union([z.number(), z.string()], { error: 'inhabited_below_ticks: a number of ticks is required' }),
        dry_run: z.optional(z.boolean()),
      }),
    },
    requestHeaders: preferHeader,
    responses: {
      200: {
        description: 'the dry run',
        json: z.strictObject({
          dry_run: z.literal(true),
          region: z.string(),
          below: z.string(),
          scanned: z.number(),
          files_changed: z.number(),
          files: z.array(pruneFile),
          chunks_removed: z.number(),
          bytes_freed: z.number(),
          unreadable_chunks: z.number(),
          skipped: z.array(z.strictObject({ path: z.string(), reason: z.string() })),
        }),
      },
      202: { description: 'started', json: z.strictObject({ op: opViewSchema }), headers: opLocationHeader },
    },
  },
} as const satisfies SchemaTable<typeof routes>;
