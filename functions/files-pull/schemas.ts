/**
 * The zod schemas of files-pull's routes (routes.ts): query, body and each success answer (why
 * apart from routes.ts: lib/http/routes/common-entries.ts).
 * @module
 */
import { opLocationHeader, opViewSchema, preferHeader } from '../../lib/http/routes/common-schemas.ts';
import type { SchemaTable } from '../../lib/http/routes/types.ts';
import * as z from '../../lib/schema.ts';
import { described } from '../../lib/schema.ts';
import type { routes } from './routes.ts';

export const schemas = {
  'files.pull': {
    body: {
      json: z.strictObject({
        url: described(z.string({ error: 'url: an http or https URL is required' }), 'http or https; no credentials; where it leads is judged by the pull Job before each connection'),
        path: described(z.string({ error: 'path: the folder to pull into is required ("" for the root)' }), 'an existing folder inside the world ("" or "/" the root)'),
        name: described(
          z.optional(z.string()),
          "one new file name by the name rule (docs/routes.md, Names), else 400 `bad_name`; default: the answer's Content-Disposition name (held to the same rule: the op fails `bad_name`), else the URL path's last segment",
        ),
      }),
    },
    requestHeaders: preferHeader,
    responses: { 202: { description: 'the op started (or the one an earlier delivery started)', json: z.strictObject({ op: opViewSchema }), headers: opLocationHeader } },
  },
  'files.pull.cancel': {
    responses: { 202: { description: 'the cancel call reached the pull', json: z.strictObject({ op: z.string(), status: z.literal('cancelling') }), headers: opLocationHeader } },
  },
} as const satisfies SchemaTable<typeof routes>;
