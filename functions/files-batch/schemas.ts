/**
 * The zod schemas of files-batch's routes (routes.ts): query, body and each success answer (why
 * apart from routes.ts: lib/http/routes/common-entries.ts).
 * @module
 */
import { itemPath, items, preferHeader } from '../../lib/http/routes/common-schemas.ts';
import type { SchemaTable } from '../../lib/http/routes/types.ts';
import * as z from '../../lib/schema.ts';
import { described } from '../../lib/schema.ts';
import type { routes } from './routes.ts';

const batchFields = {
  done: described(z.array(z.string()), "the items applied, in the request's order (a move's `from`)"),
  failed: z.array(z.strictObject({ path: z.string(), error: z.strictObject({ code: z.string(), message: z.string() }) })),
};
const BATCH_DONE = 'every item checked, then applied: those done, and those the disk refused after the check (space, I/O)';
const batchAnswer = { 200: { description: BATCH_DONE, json: z.strictObject(batchFields) } } as const;

export const schemas = {
  'files.delete_many': {
    body: { json: z.strictObject({ paths: described(items(itemPath('a path'), 'paths'), 'files, links or folders (recursively) inside the world') }) },
    requestHeaders: preferHeader,
    responses: {
      200: {
        description: BATCH_DONE,
        json: z.strictObject({
          ...batchFields,
          trash_id: described(z.optional(z.string()), 'the undo-trash record of what was deleted (one for the batch); absent when the trash is off or nothing was removed'),
        }),
      },
    },
  },
  'files.move': {
    body: {
      json: z.strictObject({
        moves: described(items(z.strictObject({ from: itemPath('from'), to: itemPath('to') }), 'moves'), 'each `from` moved to the new path `to` (its folder must exist; nothing may be there)'),
      }),
    },
    requestHeaders: preferHeader,
    responses: batchAnswer,
  },
  'files.chmod': {
    body: {
      json: z.strictObject({
        files: described(
          items(
            z.strictObject({
              path: itemPath('path'),
              mode: z
                .string({ error: 'mode must be a string of three octal digits, such as "644"' })
                .check(z.regex(/^[0-7]{3}$/, { error: 'mode must be three octal digits, such as "644" (no setuid, setgid or sticky bit)' })),
            }),
            'files',
          ),
          'a regular file or folder each, and its new permission bits',
        ),
      }),
    },
    requestHeaders: preferHeader,
    responses: batchAnswer,
  },
} as const satisfies SchemaTable<typeof routes>;
