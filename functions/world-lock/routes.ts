/**
 * world-lock's routes (lock.remove): their table entries and prose (what a declaration holds,
 * and why: lib/http/routes/common-entries.ts).
 * @module
 */
import { routesOf, S, SERVER } from '../../lib/http/routes/common-entries.ts';
import type { ProseTable, RouteDeclarations } from '../../lib/http/routes/types.ts';

export const routes = routesOf('world-lock', {
  'lock.remove': {
    method: 'DELETE',
    path: `${S}/lock`,
    // What `kubectl annotate … maintenance-` would need.
    permission: { kind: 'server', subresource: 'lock', verb: 'delete' },
    errors: [...SERVER, [400, 'bad_request'], [409, 'maintenance_in_progress'], [409, 'lock_protected'], [409, 'lock_fresh']],
    event: { type: 'dev.felis.lock.remove', force: true },
  },
} as const satisfies RouteDeclarations);

export const prose = {
  'lock.remove': {
    summary: 'Remove a stuck annotation lock, with the checks kubectl cannot make.',
    answer:
      '`{name, removed, lock:{kind,since,value,fresh}\\|null}`; 409 `maintenance_in_progress` while a Job holds the world, `lock_protected` for a `migration@` lock, `lock_fresh` for one younger than 2 min without `force=true`',
  },
} satisfies ProseTable<typeof routes>;
