/**
 * The zod schemas of files-delete's routes (routes.ts): query, body and each success answer (why
 * apart from routes.ts: lib/http/routes/common-entries.ts).
 * @module
 */
import { pathQuery, preferHeader, statusOf } from '../../lib/http/routes/common-schemas.ts';
import type { SchemaTable } from '../../lib/http/routes/types.ts';
import * as z from '../../lib/schema.ts';
import { described } from '../../lib/schema.ts';
import type { routes } from './routes.ts';

export const schemas = {
  'files.delete': {
    query: pathQuery,
    requestHeaders: preferHeader,
    responses: {
      200: {
        description: 'deleted',
        json: statusOf('deleted', {
          trash_id: described(z.optional(z.string()), 'the undo-trash record of what was deleted (restore it with files/trash/{id}/restore); absent when the trash is off'),
        }),
      },
    },
  },
} as const satisfies SchemaTable<typeof routes>;
