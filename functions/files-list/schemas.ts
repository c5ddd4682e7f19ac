/**
 * The zod schemas of files-list's routes (routes.ts): query, body and each success answer (why
 * apart from routes.ts: lib/http/routes/common-entries.ts).
 * @module
 */
import { entrySchema, LIMIT_PATTERN, wholeCount, wholeNumberText } from '../../lib/http/routes/common-schemas.ts';
import type { SchemaTable } from '../../lib/http/routes/types.ts';
import { NAME_MAX } from '../../lib/protocol/names.ts';
import { PAGE_DEFAULT_ENTRIES, PAGE_MAX_ENTRIES } from '../../lib/protocol/op-query.ts';
import * as z from '../../lib/schema.ts';
import { described } from '../../lib/schema.ts';
import type { routes } from './routes.ts';

const LIMIT_MESSAGE = `the ?limit= query parameter must be a whole number from 1 to ${PAGE_MAX_ENTRIES}`;
/** A name-like parameter: it reaches the Job's command line, so no NUL, and no longer than a name can be. */
const nameParam = (name: string, what: string) =>
  described(
    z.optional(
      z
        .string()
        .check(z.refine((v) => !v.includes('\0'), { error: `the ?${name}= query parameter cannot contain a NUL byte` }))
        .check(z.refine((v) => Buffer.byteLength(v) <= NAME_MAX, { error: `the ?${name}= query parameter is longer than ${NAME_MAX} bytes` })),
    ),
    what,
  );

export const schemas = {
  'files.list': {
    query: z.object({
      path: described(z.optional(z.string()), 'a folder; empty or absent: the root'),
      // Any of these makes a paged listing; with none the listing is the original one.
      limit: described(
        z.pipe(
          z.optional(wholeNumberText(LIMIT_PATTERN, 1, PAGE_MAX_ENTRIES, LIMIT_MESSAGE)),
          z.transform((v) => (v === undefined ? undefined : Number(v))),
        ),
        `a paged listing of at most this many entries, in byte order of name (1–${PAGE_MAX_ENTRIES}, default ${PAGE_DEFAULT_ENTRIES})`,
      ),
      after: nameParam('after', "a paged listing starting strictly after this name (the previous page's `next`); it need not exist"),
      q: nameParam('q', 'a paged listing of only the names containing this text, in any case (empty: all)'),
    }),
    responses: {
      200: {
        description: "the folder's entries",
        json: z.strictObject({
          path: z.string(),
          entries: z.array(entrySchema),
          truncated: described(z.boolean(), 'there are more entries than these'),
          next: described(z.optional(z.string()), "a paged listing with more entries: the last name of this page, the next page's `after`"),
          free_bytes: described(z.nullable(wholeCount), "the volume's free bytes plus what the undo trash holds (a mutation gives the trash's bytes back when it needs room); null when unknown"),
          trash_bytes: described(wholeCount, 'bytes the undo trash holds (0 when none)'),
          world_state: described(
            z.enum(['stopped', 'running']),
            '`running`: the server was running, starting or still stopping, so the game may have been saving while the folder was read (sizes and times of region files may be mid-save)',
          ),
        }),
      },
    },
  },
} as const satisfies SchemaTable<typeof routes>;
