/**
 * `GET /api/v1/servers/:name/holder` — what holds one server's world;
 * `GET /api/v1/holders` — every held server in the namespace, for operators.
 */
import { sendJson } from '../../lib/http/envelope.ts';
import { serverName } from '../../lib/http/file-request.ts';
import { defineFunction } from '../../lib/http/routes/register.ts';
import type { HoldState } from '../../lib/maintenance/holder.ts';
import { listHolders } from '../../lib/maintenance/holders.ts';

function view(s: HoldState) {
  const h = s.holder;
  return {
    held: h !== undefined,
    ...(h ? { kind: h.kind, source: h.source, ...(h.job ? { job: h.job } : {}), ...(h.since ? { since: h.since } : {}) } : {}),
    ...(s.staleLock !== undefined ? { stale_lock: s.staleLock } : {}),
  };
}

export const holderRoutes = defineFunction('holder', (deps) => ({
  'holder.get': async (c) => {
    const { state } = await deps.lock.inspect(serverName(c));
    return sendJson(c, 200, view(state));
  },
  'holders.list': async (c) => {
    const holders = await listHolders(deps.servers, deps.lock.namespace, new Date());
    return sendJson(c, 200, { holders: holders.map((h) => ({ server: h.server, ...view(h.state) })) });
  },
}));
