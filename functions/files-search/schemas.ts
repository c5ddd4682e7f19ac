/**
 * The zod schemas of files-search's routes (routes.ts): query, body and each success answer (why
 * apart from routes.ts: lib/http/routes/common-entries.ts).
 * @module
 */
import { entrySchema, wholeCount, wholeNumberText } from '../../lib/http/routes/common-schemas.ts';
import type { SchemaTable } from '../../lib/http/routes/types.ts';
import {
  CONTENT_BUDGET_BYTES,
  CONTENT_MAX_BYTES,
  CONTENT_MAX_FILE_BYTES,
  CONTENT_MIN_BYTES,
  CONTENT_TEXT_MAX_BYTES,
  SEARCH_BUDGET_MS,
  SEARCH_DEFAULT_LIMIT,
  SEARCH_MAX_LIMIT,
  SEARCH_MIN_QUERY,
} from '../../lib/protocol/limits.ts';
import * as z from '../../lib/schema.ts';
import { described } from '../../lib/schema.ts';
import type { routes } from './routes.ts';

const SEARCH_Q = `?q= needs at least ${SEARCH_MIN_QUERY} characters`;
const SEARCH_LIMIT = `?limit= must be a whole number from 1 to ${SEARCH_MAX_LIMIT}`;
const CONTENT_LENGTH = `?content= must be ${CONTENT_MIN_BYTES} to ${CONTENT_MAX_BYTES} bytes of UTF-8 text`;
const CONTENT_LINE = '?content= is found within one line: it cannot hold a line break (CR or LF) or a NUL byte';
const MiB = (n: number) => `${n / (1 << 20)} MiB`;

/** A name search's answer (no `content`). */
const nameAnswer = z.strictObject({
  path: z.string(),
  q: z.string(),
  matches: z.array(z.strictObject({ path: described(z.string(), "from the world's root"), ...entrySchema.shape })),
  truncated: described(z.boolean(), `stopped early: more matches than \`limit\`, or ${SEARCH_BUDGET_MS / 1000} s of walking ran out`),
  scanned: described(wholeCount, 'entries looked at'),
});

/** A content search's answer (`content` given). */
const contentAnswer = z.strictObject({
  path: z.string(),
  q: described(z.optional(z.string()), 'the name filter, when one was given'),
  content: z.string(),
  matches: z.array(
    z.strictObject({
      path: described(z.string(), "the file's path from the world's root"),
      line: described(wholeCount, '1-based'),
      column: described(wholeCount, "1-based, in bytes from the line's start, where the match begins"),
      text: described(z.string(), `the line around the match, at most ${CONTENT_TEXT_MAX_BYTES} bytes of it (so at most as many characters), without its line end`),
    }),
  ),
  truncated: described(
    z.boolean(),
    `stopped early (more matching lines than \`limit\`, ${SEARCH_BUDGET_MS / 1000} s, or ${CONTENT_BUDGET_BYTES / (1 << 30)} GiB read), or a text file over ${MiB(CONTENT_MAX_FILE_BYTES)} was skipped: the matches are not all there are`,
  ),
  scanned_files: described(wholeCount, 'files opened and read (binary files too: their first bytes were read to tell)'),
  scanned_bytes: described(wholeCount, 'bytes read from them'),
  world_state: described(z.enum(['stopped', 'running']), '`running`: the server was running, so the game may have been writing files as they were read'),
});

export const schemas = {
  'files.search': {
    query: z.object({
      path: described(z.optional(z.string()), 'the folder to search below; empty or absent: the root'),
      q: described(
        z.optional(z.string({ error: SEARCH_Q }).check(z.refine((q) => Array.from(q).length >= SEARCH_MIN_QUERY, { error: SEARCH_Q }))),
        'a case-insensitive part of the name; with `*` (any run) or `?` (one character), a glob on the whole name. Required without `content`; with it, only files whose name matches are searched',
      ),
      content: described(
        z.optional(
          z
            .string({ error: CONTENT_LENGTH })
            .check(z.refine((v) => Buffer.byteLength(v) >= CONTENT_MIN_BYTES && Buffer.byteLength(v) <= CONTENT_MAX_BYTES, { error: CONTENT_LENGTH }))
            .check(z.refine((v) => !/[\r\n\0]/.test(v), { error: CONTENT_LINE })),
        ),
        `a content search: the literal text (${CONTENT_MIN_BYTES}–${CONTENT_MAX_BYTES} bytes, no line break) found in the lines of text files; ASCII letters in any case, every other character exactly`,
      ),
      limit: described(
        z.optional(z.pipe(wholeNumberText(/^[0-9]{1,4}$/, 1, SEARCH_MAX_LIMIT, SEARCH_LIMIT), z.transform(Number))),
        `the most matches (names, or lines with \`content\`) answered, 1–${SEARCH_MAX_LIMIT}; default ${SEARCH_DEFAULT_LIMIT}`,
      ),
    }),
    responses: {
      200: {
        description: 'without `content`: the entries found, in byte order of path; with it: the lines found, in the order the walk met them',
        json: z.union([nameAnswer, contentAnswer]),
      },
    },
  },
} as const satisfies SchemaTable<typeof routes>;
