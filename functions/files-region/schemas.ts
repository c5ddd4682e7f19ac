/**
 * The zod schemas of files-region's routes (routes.ts): query, body and each success answer (why
 * apart from routes.ts: lib/http/routes/common-entries.ts).
 * @module
 */
import { opLocationHeader, opViewSchema, pathQuery, preferHeader } from '../../lib/http/routes/common-schemas.ts';
import type { SchemaTable } from '../../lib/http/routes/types.ts';
import * as z from '../../lib/schema.ts';
import { described } from '../../lib/schema.ts';
import type { routes } from './routes.ts';

const ticks = described(z.union([z.number(), z.string(), z.null()]), 'a number; a decimal string when past ±(2^53-1); null when the chunk cannot be read');
const chunk = z.strictObject({
  x: described(z.number(), "the chunk's x (regionX*32 + index & 31)"),
  z: described(z.number(), "the chunk's z (regionZ*32 + index >> 5)"),
  sectors: described(z.number(), 'the 4 KiB sectors the header gives it'),
  bytes: described(z.union([z.number(), z.null()]), 'its stored length (the length field); null when its slot cannot be trusted'),
  timestamp: described(z.number(), 'its last save, seconds since 1970, as the header keeps it'),
  compression: described(
    z.union([z.enum(['gzip', 'zlib', 'none', 'lz4', 'custom', 'unknown']), z.null()]),
    'its compression byte (lz4 and custom are not read: their chunks are never pruned); null when unreadable',
  ),
  external: described(z.boolean(), 'its payload is in `c.X.Z.mcc` beside the file'),
  inhabited_ticks: ticks,
  error: described(z.optional(z.string()), 'why the chunk cannot be read'),
});
const pruneFile = z.strictObject({ path: z.string(), chunks_removed: z.number(), bytes_freed: z.number(), removed: described(z.boolean(), 'every chunk goes: the file is removed') });

export const schemas = {
  'files.region': {
    query: pathQuery,
    responses: {
      200: {
        description: "the region file's chunk table",
        json: z.strictObject({
          path: z.string(),
          chunks: described(z.array(chunk), 'the used slots, in index order'),
          sectors_used: described(z.number(), 'the header and every sound slot'),
          sectors_free: described(z.number(), "the file's other sectors"),
          world_state: described(z.enum(['stopped', 'running']), '`running`: the server was running, so the game may have been writing the file'),
        }),
      },
    },
  },
  'files.region.prune': {
    body: {
      json: z.strictObject({
        path: described(z.string({ error: 'path: a world folder or its region folder is required' }), 'a world folder (its `region/`, `entities/` and `poi/` are pruned) or its `region` folder'),
        inhabited_below_ticks: described(
          z.union([z.number(), z.string()], { error: 'inhabited_below_ticks: a number of ticks is required' }),
          'chunks whose InhabitedTime is below this go (20 ticks a second); a non-negative integer, or its decimal string up to 2^63-1',
        ),
        dry_run: described(z.optional(z.boolean()), 'answer what would go, change nothing'),
      }),
    },
    requestHeaders: preferHeader,
    responses: {
      200: {
        description: 'the dry run: what a prune would remove',
        json: z.strictObject({
          dry_run: z.literal(true),
          region: described(z.string(), 'the region folder, root-relative'),
          below: described(z.string(), 'the bound, as a decimal'),
          scanned: described(z.number(), 'region files looked at'),
          files_changed: z.number(),
          files: described(z.array(pruneFile), 'the region files that change, the first 2000'),
          chunks_removed: z.number(),
          bytes_freed: described(z.number(), 'of the region, entities and poi files and external chunk files together'),
          unreadable_chunks: described(z.number(), 'kept: their InhabitedTime cannot be read'),
          skipped: described(z.array(z.strictObject({ path: z.string(), reason: z.string() })), 'region files left alone, and why'),
        }),
      },
      202: { description: 'the prune started (or the one an earlier delivery started)', json: z.strictObject({ op: opViewSchema }), headers: opLocationHeader },
    },
  },
} as const satisfies SchemaTable<typeof routes>;
