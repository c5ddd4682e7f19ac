/**
 * The zod schemas of files-tail's routes (routes.ts): query, body and each success answer (why
 * apart from routes.ts: lib/http/routes/common-entries.ts).
 * @module
 */
import { pathQuery, wholeCount, wholeNumberText } from '../../lib/http/routes/common-schemas.ts';
import type { SchemaTable } from '../../lib/http/routes/types.ts';
import * as z from '../../lib/schema.ts';
import { described } from '../../lib/schema.ts';
import { TAIL_LINES } from './op.ts';
import type { routes } from './routes.ts';

const LINES_ERROR = `the ?lines= query parameter must be a whole number from ${TAIL_LINES.min} to ${TAIL_LINES.max}`;

export const schemas = {
  'files.tail': {
    query: z.extend(pathQuery, {
      lines: described(
        // Text to the schema, checked by its digits and bounds; the document types it as an integer.
        z.optional(wholeNumberText(/^[1-9][0-9]{0,3}$/, TAIL_LINES.min, TAIL_LINES.max, LINES_ERROR)),
        `how many of the last lines (${TAIL_LINES.min}–${TAIL_LINES.max}, default ${TAIL_LINES.default})`,
      ),
    }),
    responses: {
      200: {
        description: 'the last lines',
        json: z.strictObject({
          path: z.string(),
          lines: described(z.array(z.string()), 'oldest first, without their line ends; a line over 16 KiB keeps its first 16 KiB and ends `[… N more bytes]`'),
          truncated: described(z.boolean(), 'fewer lines than asked although the file has more (at most 1 MiB is read back from the end), or a line was cut'),
          size: described(wholeCount, "the file's size when it was read: the lines end there"),
          world_state: described(z.enum(['stopped', 'running']), '`running`: the server was running, so the game may be writing the file'),
        }),
      },
    },
  },
} as const satisfies SchemaTable<typeof routes>;
