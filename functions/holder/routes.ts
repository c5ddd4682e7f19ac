/**
 * The routes of holder (holder.get, holders.list), declared: each one's entry in the route table (method, path,
 * permission, envelope codes, event; lib/http/routes/table.ts collects them) and its prose
 * (lib/http/routes/prose.ts collects it). Plain data, no validation library: the serving shell
 * reads the table before a woken service answers its first probe, and no bundle keeps the prose.
 * The zod schemas of the same routes are in schemas.ts beside it.
 * @module
 */
import { S, SERVER } from '../../lib/http/routes/common-entries.ts';
import type { ProseTable, RouteTable } from '../../lib/http/routes/types.ts';

export const routes = {
  'holder.get': {
    fn: 'holder',
    method: 'GET',
    path: `${S}/holder`,
    permission: { kind: 'server', subresource: 'holder', verb: 'get' },
    errors: SERVER,
    event: { type: 'dev.felis.holder.get' },
  },
  'holders.list': {
    fn: 'holder',
    method: 'GET',
    path: '/api/v1/holders',
    // Every holder in the namespace: a per-server grant (resourceNames) cannot allow a list.
    permission: { kind: 'server', subresource: 'holder', verb: 'list' },
    errors: [],
    event: { type: 'dev.felis.holders.list' },
  },
} as const satisfies RouteTable;

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
