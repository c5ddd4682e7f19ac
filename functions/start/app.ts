/**
 * `POST /api/v1/servers/:name/start` — the guarded start: refused while anything holds the world;
 * `POST /api/v1/servers/:name/stop` — always allowed.
 */

import { DomainError } from '../../lib/errors.ts';
import { sendJson } from '../../lib/http/envelope.ts';
import { serverName } from '../../lib/http/file-request.ts';
import { defineFunction } from '../../lib/http/routes/register.ts';
import type { MinecraftServer } from '../../lib/kube/servers.ts';
import { MaintenanceBusyError } from '../../lib/maintenance/errors.ts';

const view = (s: MinecraftServer) => ({
  name: s.metadata.name,
  desiredState: s.spec?.desiredState ?? 'Stopped',
  phase: s.status?.phase ?? '',
  ready: s.status?.ready ?? false,
});

export const startRoutes = defineFunction('start', (deps) => ({
  'server.start': async (c) => {
    const name = serverName(c);
    try {
      return sendJson(c, 202, view(await deps.lock.start(name)));
    } catch (err) {
      // The idle-world reaper is archiving this world: a start must wait for it to finish.
      if (err instanceof MaintenanceBusyError && err.kind === 'reap') {
        throw new DomainError('world_reclaiming', 'conflict', 'this world is being archived while idle; retry once it finishes', { retryAfterSeconds: err.retryAfterSeconds });
      }
      throw err;
    }
  },
  'server.stop': async (c) => sendJson(c, 202, view(await deps.lock.stop(serverName(c)))),
}));
