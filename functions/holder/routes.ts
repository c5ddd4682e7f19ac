/**
 * holder's routes (holder.get, holders.list): their table entries and prose (what a declaration holds,
 * and why: lib/http/routes/common-entries.ts).
 * @module
 */
import { routesOf, S, SERVER } from '../../lib/http/routes/common-entries.ts';
import type { ProseTable, RouteDeclarations } from '../../lib/http/routes/types.ts';

export const routes = routesOf('holder', {
  'holder.get': {
    method: 'GET',
    path: `${S}/holder`,
    permission: { kind: 'server', subresource: 'holder', verb: 'get' },
    errors: SERVER,
    event: { type: 'dev.felis.holder.get' },
  },
  'holders.list': {
    method: 'GET',
    path: '/api/v1/holders',
    // Every holder in the namespace: a per-server grant (resourceNames) cannot allow a list.
    permission: { kind: 'server', subresource: 'holder', verb: 'list' },
    errors: [],
    event: { type: 'dev.felis.holders.list' },
  },
} as const satisfies RouteDeclarations);

export const prose = {
  'holder.get': {
    summary: "What holds one server's world.",
    answer: '`{held, kind?, source?: "job"\\|"lock", job?, since?, stale_lock?}`',
  },
  'holders.list': {
    summary: 'Every held server (or one with a stale lock) in the namespace, for operators.',
    answer: '`{holders:[{server, held, kind, source, job?, since?, stale_lock?}]}`',
  },
} satisfies ProseTable<typeof routes>;
