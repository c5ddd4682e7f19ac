/**
 * The routes of start (server.start, server.stop), declared: each one's entry in the route table (method, path,
 * permission, envelope codes, event; lib/http/routes/table.ts collects them) and its prose
 * (lib/http/routes/prose.ts collects it). Plain data, no validation library: the serving shell
 * reads the table before a woken service answers its first probe, and no bundle keeps the prose.
 * The zod schemas of the same routes are in schemas.ts beside it.
 * @module
 */
import { S, SERVER } from '../../lib/http/routes/common-entries.ts';
import type { ProseTable, RouteTable } from '../../lib/http/routes/types.ts';

export const routes = {
  'server.start': {
    fn: 'start',
    method: 'POST',
    path: `${S}/start`,
    permission: { kind: 'server', subresource: 'state', verb: 'update' },
    errors: [...SERVER, [409, 'maintenance_in_progress'], [409, 'world_reclaiming']],
    event: { type: 'dev.felis.server.start' },
  },
  'server.stop': {
    fn: 'start',
    method: 'POST',
    path: `${S}/stop`,
    permission: { kind: 'server', subresource: 'state', verb: 'update' },
    errors: SERVER,
    event: { type: 'dev.felis.server.stop' },
  },
} as const satisfies RouteTable;

export const prose = {
  'server.start': {
    summary: 'The guarded start: refused while anything holds the world.',
    answer: '202 `{name, desiredState:"Running", phase, ready}`; 409 `maintenance_in_progress` while held (`world_reclaiming` while the idle-world reaper holds it)',
  },
  'server.stop': {
    summary: 'Stop the server; always allowed.',
    answer: '202 `{name, desiredState:"Stopped", phase, ready}`',
  },
} satisfies ProseTable<typeof routes>;
