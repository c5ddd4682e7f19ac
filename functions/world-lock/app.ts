/**
 * `DELETE /api/v1/servers/:name/lock[?force=true]` — an operator removing a stuck annotation lock
 * (what `kubectl annotate minecraftserver <name> felis.lolicon.best/maintenance-` would do, with
 * the checks kubectl cannot make). Refused while a Job holds the world, always for a migration
 * lock, and for a lock younger than Grace unless forced. The answer says what was removed.
 */
import type { Hono } from 'hono';
import type { Env } from '../../lib/http/app.ts';
import { acceptEvents, routeEvent, serverRoute } from '../../lib/events/entry.ts';
import { audit } from '../../lib/http/audit.ts';
import { badRequest, sendJson } from '../../lib/http/envelope.ts';
import { serverName } from '../../lib/http/file-request.ts';
import type { Deps } from '../../lib/http/deps.ts';

/** `?force=` is off when absent or `false`, on only for `true`; anything else is a mistake worth naming. */
function forceFlag(value: string | undefined): boolean {
  if (value === undefined || value === 'false') return false;
  if (value === 'true') return true;
  throw badRequest('force must be true or false');
}

export const worldLockRoutes = (deps: Deps) => (app: Hono<Env>) => {
  acceptEvents(app, deps.logger, {
    'dev.felis.lock.remove': routeEvent('DELETE', serverRoute('lock', { force: true })),
  });
  app.delete('/api/v1/servers/:name/lock', async (c) => {
    const name = serverName(c);
    const force = forceFlag(c.req.query('force'));
    const u = await deps.lock.unlock(name, { force });
    if (u.removed) audit(deps.logger, c.get('requestId'), 'maintenance.unlock', name, '', { removed: u.lock!.value, kind: u.lock!.kind, fresh: u.lock!.fresh, force });
    return sendJson(c, 200, { name, removed: u.removed, lock: u.lock });
  });
};
