/**
 * `GET /api/v1/servers/:name/holder` — what holds one server's world;
 * `GET /api/v1/holders` — every held server in the namespace, for operators.
 */
import type { Hono } from 'hono';
import type { Env } from '../../lib/http/app.ts';
import { noServer, acceptEvents, routeEvent, serverRoute } from '../../lib/events/entry.ts';
import { sendJson } from '../../lib/http/envelope.ts';
import { serverName } from '../../lib/http/file-request.ts';
import type { Deps } from '../../lib/http/deps.ts';
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

export const holderRoutes = (deps: Deps) => (app: Hono<Env>) => {
  acceptEvents(app, deps.logger, {
    'dev.felis.holder.get': routeEvent('GET', serverRoute('holder')),
    'dev.felis.holders.list': routeEvent('GET', noServer('/api/v1/holders')),
  });
  app.get('/api/v1/servers/:name/holder', async (c) => {
    const { state } = await deps.lock.inspect(serverName(c));
    return sendJson(c, 200, view(state));
  });

  app.get('/api/v1/holders', async (c) => {
    const holders = await listHolders(deps.servers, deps.lock.namespace, new Date());
    return sendJson(c, 200, { holders: holders.map((h) => ({ server: h.server, ...view(h.state) })) });
  });
};
