/**
 * files-tail's routes (files.tail): their table entries and prose (what a declaration holds,
 * and why: lib/http/routes/common-entries.ts).
 * @module
 */
import { BESIDE_GAME, filesGet, GATES, JOB, routesOf, S } from '../../lib/http/routes/common-entries.ts';
import type { ProseTable, RouteDeclarations } from '../../lib/http/routes/types.ts';

export const routes = routesOf('files-tail', {
  'files.tail': {
    method: 'GET',
    path: `${S}/files/tail`,
    permission: filesGet,
    errors: [...GATES, ...BESIDE_GAME, ...JOB, [413, 'too_large'], [429, 'follow_limit'], [503, 'follow_unavailable']],
    event: { type: 'dev.felis.files.tail', path: true, query: ['lines', 'follow', 'from'] },
  },
} as const satisfies RouteDeclarations);

export const prose = {
  'files.tail': {
    summary: 'The last lines of a file (a log), read backwards from its end: at most 1 MiB read, lines over 16 KiB cut. No lock; answers while the server runs.',
    answer:
      "`{path, lines:[…], truncated, size, world_state}` — the last `lines` (1–5000, default 100) lines, oldest first, without line ends (CRLF too); `truncated` when the 1 MiB read back ended before that many lines, or a line was cut (it ends `[… N more bytes]`); `size` the file's size when read. With `follow=true`: `text/event-stream`, the last `lines` lines then each appended line as an event (`id: <inode>:<offset>`, `data: <line>`), through rotations of the file, for up to 10 minutes, ending `event: end`; `Last-Event-ID` (or `from=`) resumes after an event; at most 2 follows of a server at once (429 `follow_limit`)",
  },
} satisfies ProseTable<typeof routes>;
