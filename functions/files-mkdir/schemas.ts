/**
 * The zod schemas of files-mkdir's routes (routes.ts): query, body and each success answer (why
 * apart from routes.ts: lib/http/routes/common-entries.ts).
 * @module
 */
import { onlyTrue, pathQuery, preferHeader, statusOf } from '../../lib/http/routes/common-schemas.ts';
import type { SchemaTable } from '../../lib/http/routes/types.ts';
import * as z from '../../lib/schema.ts';
import type { routes } from './routes.ts';

export const schemas = {
  'files.mkdir': {
    query: z.extend(pathQuery, {
      parents: onlyTrue(
        "make the missing folders above `path` first, each as mkdir would (0755, the game's uid, never through a link leading out); a folder already at `path` is then no error (mkdir -p)",
      ),
    }),
    requestHeaders: preferHeader,
    responses: { 200: { description: 'created (with `parents=true`: or already a folder)', json: statusOf('created') } },
  },
} as const satisfies SchemaTable<typeof routes>;
