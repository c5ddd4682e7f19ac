/**
 * settle's routes (restore.settle): their table entries and prose (what a declaration holds,
 * and why: lib/http/routes/common-entries.ts).
 * @module
 */
import { SETTLE_URL } from '../../lib/auth/permission.ts';
import { routesOf } from '../../lib/http/routes/common-entries.ts';
import type { ProseTable, RouteDeclarations } from '../../lib/http/routes/types.ts';

export const routes = routesOf('settle', {
  'restore.settle': {
    method: 'POST',
    path: '/api/v1/restore-chains/settle',
    // Touches no server in particular: a non-resource URL only a ClusterRole can grant.
    permission: { kind: 'nonresource', path: SETTLE_URL, verb: 'post' },
    errors: [],
    event: { type: 'dev.felis.restore.settle' },
  },
} as const satisfies RouteDeclarations);

export const prose = {
  'restore.settle': {
    summary: 'One settle pass: restore chains, and pulls waiting to be placed.',
    answer:
      "`{chains:[{job, server, state, reason?, message?, error?}], pulls:[{job, server, op, state, to?, code?, error?}]}` — a pull that ended `staged` is placed under the world's line (`placed`), refused (`failed` with its `code`), or left for the next pass (`pending`)",
  },
} satisfies ProseTable<typeof routes>;
