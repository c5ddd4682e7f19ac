/**
 * `DELETE /api/v1/servers/:name/lock[?force=true]` — an operator removing a stuck annotation lock
 * (what `kubectl annotate minecraftserver <name> felis.lolicon.best/maintenance-` would do, with
 * the checks kubectl cannot make). Refused while a Job holds the world, always for a migration
 * lock, and for a lock younger than Grace unless forced. The answer says what was removed.
 */
import { audit } from '../../lib/http/audit.ts';
import { sendJson } from '../../lib/http/envelope.ts';
import { serverName } from '../../lib/http/file-request.ts';
import { defineFunction } from '../../lib/http/routes/register.ts';

export const worldLockRoutes = defineFunction('world-lock', (deps) => ({
  'lock.remove': async (c, input) => {
    const name = serverName(c);
    // `?force=` is off when absent or `false`, on only for `true`; anything else is refused (the table's schema).
    const { force } = input.query();
    const u = await deps.lock.unlock(name, { force });
    if (u.removed) audit(deps.logger, c.get('requestId'), 'maintenance.unlock', name, '', { removed: u.lock!.value, kind: u.lock!.kind, fresh: u.lock!.fresh, force });
    return sendJson(c, 200, { name, removed: u.removed, lock: u.lock });
  },
}));
