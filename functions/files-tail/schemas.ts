/**
 * The zod schemas of files-tail's routes (routes.ts): query, body and each success answer (why
 * apart from routes.ts: lib/http/routes/common-entries.ts).
 * @module
 */
import { pathQuery, wholeCount, wholeNumberText } from '../../lib/http/routes/common-schemas.ts';
import type { SchemaTable } from '../../lib/http/routes/types.ts';
import * as z from '../../lib/schema.ts';
import { described } from '../../lib/schema.ts';
import { FOLLOW_EVENT_ID, FOLLOW_LIFETIME_SECONDS, TAIL_LINES } from './op.ts';
import type { routes } from './routes.ts';

const LINES_ERROR = `the ?lines= query parameter must be a whole number from ${TAIL_LINES.min} to ${TAIL_LINES.max}`;

const FROM_ERROR = 'the ?from= query parameter must be an event id of a follow (<inode>:<offset>)';

export const schemas = {
  'files.tail': {
    query: z.extend(pathQuery, {
      lines: described(
        // Text to the schema, checked by its digits and bounds; the document types it as an integer.
        z.optional(wholeNumberText(/^[1-9][0-9]{0,3}$/, TAIL_LINES.min, TAIL_LINES.max, LINES_ERROR)),
        `how many of the last lines (${TAIL_LINES.min}–${TAIL_LINES.max}, default ${TAIL_LINES.default}); with follow=true, how many come first`,
      ),
      follow: described(
        z.optional(z.enum(['true', 'false'], { error: 'the ?follow= query parameter must be true or false' })),
        `\`true\`: answer an event stream (text/event-stream) of the last lines, then of each line appended, for up to ${FOLLOW_LIFETIME_SECONDS / 60} minutes`,
      ),
      from: described(
        z.optional(z.string({ error: FROM_ERROR }).check(z.regex(FOLLOW_EVENT_ID, { error: FROM_ERROR }))),
        'with follow=true: resume after this event id instead of sending the last lines first (as the `Last-Event-ID` header does)',
      ),
    }),
    requestHeaders: {
      'Last-Event-ID': {
        description: "with follow=true: the id of the last event seen; the stream resumes after it (a browser's EventSource sends it when it reconnects). `?from=` wins when both are sent",
      },
    },
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
        raw: {
          contentTypes: ['text/event-stream'],
          description:
            'with follow=true: Server-Sent Events, one per line (`id: <inode>:<offset>`, `data: <the line>`; a CR inside a line is sent as U+240D), `: keepalive` comments every 15 s, and a last `event: end` with `data: {"reason":"lifetime"|"shutdown"|"ended"}`',
        },
        headers: {
          'X-Felis-World-State': { description: 'with follow=true: `stopped` or `running` (the game may be writing the log), as `world_state` says in the JSON answer' },
        },
      },
    },
  },
} as const satisfies SchemaTable<typeof routes>;
