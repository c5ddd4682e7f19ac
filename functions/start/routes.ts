/**
 * start's routes (server.start, server.stop): their table entries and prose (what a declaration holds,
 * and why: lib/http/routes/common-entries.ts).
 * @module
 */
import { routesOf, S, SERVER } from '../../lib/http/routes/common-entries.ts';
import type { ProseTable, RouteDeclarations } from '../../lib/http/routes/types.ts';

export const routes = routesOf('start', {
  'server.start': {
    method: 'POST',
    path: `${S}/start`,
    permission: { kind: 'server', subresource: 'state', verb: 'update' },
    errors: [...SERVER, [409, 'maintenance_in_progress'], [409, 'world_reclaiming']],
    event: { type: 'dev.felis.server.start' },
  },
  'server.stop': {
    method: 'POST',
    path: `${S}/stop`,
    permission: { kind: 'server', subresource: 'state', verb: 'update' },
    errors: SERVER,
    event: { type: 'dev.felis.server.stop' },
  },
} as const satisfies RouteDeclarations);

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
