/**
 * `DELETE /api/v1/servers/:name/lock` — an operator clearing a stuck annotation lock (the
 * equivalent of `kubectl annotate minecraftserver <name> felis.lolicon.best/maintenance-`).
 * Refused while a Job holds the world: that hold is real, and ends with the Job.
 */
import type { Hono } from 'hono';
import type { Env } from '../../lib/http/app.ts';
import { audit } from '../../lib/http/audit.ts';
import { sendJson } from '../../lib/http/envelope.ts';
import { serverName } from '../../lib/http/file-request.ts';
import type { Deps } from '../../lib/http/deps.ts';

export const worldLockRoutes = (deps: Deps) => (app: Hono<Env>) => {
  app.delete('/api/v1/servers/:name/lock', async (c) => {
    const name = serverName(c);
    const removed = await deps.lock.clearLock(name);
    if (removed !== undefined) audit(deps.logger, c.get('requestId'), 'maintenance.unlock', name, '', { removed });
    return sendJson(c, 200, { name, removed: removed ?? null });
  });
};
