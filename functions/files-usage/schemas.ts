/**
 * The zod schemas of files-usage's routes (routes.ts): query, body and each success answer (why
 * apart from routes.ts: lib/http/routes/common-entries.ts).
 * @module
 */
import { wholeCount, wholeNumberText } from '../../lib/http/routes/common-schemas.ts';
import type { SchemaTable } from '../../lib/http/routes/types.ts';
import * as z from '../../lib/schema.ts';
import { described } from '../../lib/schema.ts';
import { USAGE_DEPTH, USAGE_TOP } from './op.ts';
import type { routes } from './routes.ts';

/** A whole-number query parameter from `b.min` to `b.max`, absent: the default (the Job's). */
const bounded = (name: string, b: { min: number; max: number; default: number }, what: string) => {
  const error = `the ?${name}= query parameter must be a whole number from ${b.min} to ${b.max}`;
  return described(z.optional(z.pipe(wholeNumberText(/^[0-9]{1,3}$/, b.min, b.max, error), z.transform(Number))), `${what} (${b.min}–${b.max}, default ${b.default})`);
};

const bytes = (what: string) => described(wholeCount, what);
/** An entry with, while `depth` goes below it, its own entries: three levels at most, spelled out (the document has no recursive schemas). */
const entryAt = (below?: z.ZodMiniType) =>
  z.strictObject({
    name: z.string(),
    bytes: bytes('allocated on disk under it'),
    apparent_bytes: bytes('the sizes of what is under it'),
    files: described(wholeCount, 'files under it (1 for a file)'),
    is_dir: z.boolean(),
    ...(below ? { children: described(z.optional(z.array(below)), "a folder's own entries, while `depth` goes below it") } : {}),
  });
const child = entryAt(entryAt(entryAt()));

export const schemas = {
  'files.usage': {
    query: z.object({
      path: described(z.optional(z.string()), 'a folder (or a file); empty or absent: the root'),
      depth: bounded('depth', USAGE_DEPTH, 'how many levels of `children`'),
      top: bounded('top', USAGE_TOP, 'how many files in `largest`'),
    }),
    responses: {
      200: {
        description: 'what the folder holds',
        json: z.strictObject({
          path: z.string(),
          bytes: bytes('allocated on disk (st_blocks) under the path, the folders included, each file once'),
          apparent_bytes: bytes('the sum of the sizes, each file once'),
          files: described(wholeCount, 'names that are not folders (links included)'),
          dirs: described(wholeCount, 'folders under the path'),
          children: described(z.array(child), 'the entries of the path, largest first (at most 100; 10 below them, 4 below those)'),
          largest: described(z.array(z.strictObject({ path: z.string(), bytes: bytes('allocated'), apparent_bytes: bytes('its size') })), 'the largest files, largest first'),
          capacity_bytes: described(z.nullable(wholeCount), "the volume's size; null when unknown"),
          free_bytes: described(z.nullable(wholeCount), "the volume's free bytes plus what the undo trash holds, as a listing says it; null when unknown"),
          trash_bytes: described(wholeCount, 'bytes of the undo trash and the working files under the path, counted nowhere else'),
          scanned_at: described(z.string(), 'when the walk ran (RFC 3339)'),
          truncated: described(z.boolean(), 'the walk stopped early (its 20 s budget, or a folder too deep): the figures are what it saw'),
          world_state: described(z.enum(['stopped', 'running']), '`running`: the server was running, so the game may have been writing while the folder was walked'),
        }),
      },
    },
  },
} as const satisfies SchemaTable<typeof routes>;
