/**
 * The zod schemas of files-trash's routes (routes.ts): query, body and each success answer (why
 * apart from routes.ts: lib/http/routes/common-entries.ts).
 * @module
 */
import { LIMIT_PATTERN, preferHeader, wholeCount, wholeNumberText } from '../../lib/http/routes/common-schemas.ts';
import type { SchemaTable } from '../../lib/http/routes/types.ts';
import { PAGE_MAX_ENTRIES } from '../../lib/protocol/op-query.ts';
import { TRASH_ID } from '../../lib/protocol/trash-env.ts';
import * as z from '../../lib/schema.ts';
import { described } from '../../lib/schema.ts';
import type { routes } from './routes.ts';

/** One undo-trash record as the listing shows it (the Job's `trash_items`, job/trash/). */
const trashItemSchema = z.strictObject({
  id: described(z.string(), '16 lowercase hex digits: the record, for restore and purge (ids sort by age)'),
  op: described(z.string(), 'the op that put it there: delete, delete-many, write, upload, unzip, …'),
  paths: described(z.array(z.string()), "the paths it removed or replaced, from the world's root, in the op's order"),
  bytes: described(wholeCount, 'bytes of regular files it holds'),
  entries: described(wholeCount, 'files, folders and links it holds'),
  at: described(z.string(), 'RFC 3339 (ms): when it was trashed'),
  actor: described(z.string(), 'who asked for the op (the caller as the function saw it); empty when the Job was not told'),
  expires_at: described(z.string(), 'RFC 3339 (ms): when it goes for good'),
});
const TRASH_AFTER = 'the ?after= query parameter must be a trash record id (16 lowercase hex digits)';
const TRASH_LIMIT = `the ?limit= query parameter must be a whole number from 1 to ${PAGE_MAX_ENTRIES}`;

export const schemas = {
  'files.trash.list': {
    query: z.object({
      limit: described(
        z.pipe(
          z.optional(wholeNumberText(LIMIT_PATTERN, 1, PAGE_MAX_ENTRIES, TRASH_LIMIT)),
          z.transform((v) => (v === undefined ? undefined : Number(v))),
        ),
        `at most this many records (1–${PAGE_MAX_ENTRIES}; the Job's default without)`,
      ),
      after: described(
        z.optional(z.string().check(z.refine((v) => v === '' || TRASH_ID.test(v), { error: TRASH_AFTER }))),
        "the records older than this id (the previous page's `next`); empty or absent: from the newest",
      ),
    }),
    responses: {
      200: {
        description: 'the undo trash, newest first',
        json: z.strictObject({
          items: z.array(trashItemSchema),
          next: described(z.optional(z.string()), "more records: the last id of this page, the next page's `after`"),
          trash_bytes: described(wholeCount, 'bytes the whole trash holds (0 when empty)'),
        }),
      },
    },
  },
  'files.trash.restore': {
    body: {
      json: z.strictObject({
        to: described(
          z.optional(z.string({ error: 'to must be a string' }).check(z.minLength(1, { error: 'to cannot be empty' }))),
          'a folder to restore under, made when missing; default: where each path was',
        ),
      }),
    },
    requestHeaders: preferHeader,
    responses: {
      200: {
        description: 'put back; the record is gone from the trash',
        json: z.strictObject({ id: z.string(), restored: described(z.array(z.string()), "the paths put back, in the record's order") }),
      },
    },
  },
  'files.trash.purge': {
    requestHeaders: preferHeader,
    responses: {
      200: { description: 'removed for good', json: z.strictObject({ id: z.string(), purged: described(wholeCount, 'records removed (1)'), bytes: described(wholeCount, 'bytes freed') }) },
    },
  },
  'files.trash.purge_all': {
    requestHeaders: preferHeader,
    responses: { 200: { description: 'every record removed for good', json: z.strictObject({ purged: described(wholeCount, 'records removed'), bytes: described(wholeCount, 'bytes freed') }) } },
  },
} as const satisfies SchemaTable<typeof routes>;
