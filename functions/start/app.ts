/**
 * `POST /api/v1/servers/:name/start` — the guarded start: refused while anything holds the world;
 * `POST /api/v1/servers/:name/stop` — always allowed.
 */
import type { Hono } from 'hono';
import type { Env } from '../../lib/http/app.ts';
import { acceptEvents, routeEvent, serverRoute } from '../../lib/events/entry.ts';
import { ApiError, sendJson } from '../../lib/http/envelope.ts';
import { serverName } from '../../lib/http/file-request.ts';
import type { Deps } from '../../lib/http/deps.ts';
import type { MinecraftServer } from '../../lib/kube/servers.ts';
import { MaintenanceBusyError } from '../../lib/maintenance/errors.ts';

const view = (s: MinecraftServer) => ({
  name: s.metadata.name,
  desiredState: s.spec?.desiredState ?? 'Stopped',
  phase: s.status?.phase ?? '',
  ready: s.status?.ready ?? false,
});

export const startRoutes = (deps: Deps) => (app: Hono<Env>) => {
  acceptEvents(app, deps.logger, {
    'dev.felis.server.start': routeEvent('POST', serverRoute('start')),
    'dev.felis.server.stop': routeEvent('POST', serverRoute('stop')),
  });
  app.post('/api/v1/servers/:name/start', async (c) => {
    const name = serverName(c);
    try {
      return sendJson(c, 202, view(await deps.lock.start(name)));
    } catch (err) {
      // The idle-world reaper is archiving this world: a start must wait for it to finish.
      if (err instanceof MaintenanceBusyError && err.kind === 'reap') {
        throw new ApiError(409, 'world_reclaiming', 'this world is being archived while idle; retry once it finishes');
      }
      throw err;
    }
  });

  app.post('/api/v1/servers/:name/stop', async (c) => {
    return sendJson(c, 202, view(await deps.lock.stop(serverName(c))));
  });
};
