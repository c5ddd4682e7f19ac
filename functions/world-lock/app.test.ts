import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LockFreshError, LockProtectedError, MaintenanceBusyError, ServerNotFoundError } from '../../lib/maintenance/errors.ts';
import type { Unlocked } from '../../lib/maintenance/world-lock.ts';
import { envelopeOf, routeKit } from '../../lib/testing/route-kit.ts';
import { worldLockRoutes } from './app.ts';

function kit(answer: (force: boolean) => Unlocked) {
  const asked: boolean[] = [];
  const k = routeKit(worldLockRoutes, {
    lock: {
      unlock: async (_name: string, opts: { force: boolean }) => {
        asked.push(opts.force);
        return answer(opts.force);
      },
    },
  });
  return { ...k, asked };
}
const stale = { kind: 'file-write', since: '2026-11-29T10:00:00Z', value: 'file-write@2026-11-29T10:00:00Z', fresh: false };

test('an unlock answers what it removed and audits it with the server as target', async () => {
  const k = kit(() => ({ removed: true, lock: stale }));
  const r = await k.call('DELETE', '/api/v1/servers/survival/lock');
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body, { name: 'survival', removed: true, lock: stale });
  const [a] = k.audits();
  assert.equal(a!.action, 'maintenance.unlock');
  assert.equal(a!.target, 'survival');
  assert.deepEqual(a!.payload, { removed: stale.value, kind: 'file-write', fresh: false, force: false });
});

test('nothing to remove: removed false, lock null, not audited', async () => {
  const k = kit(() => ({ removed: false, lock: null }));
  const r = await k.call('DELETE', '/api/v1/servers/survival/lock');
  assert.deepEqual(r.body, { name: 'survival', removed: false, lock: null });
  assert.equal(k.audits().length, 0);
});

test('?force is true, false or absent; anything else is 400 bad_request before any call', async () => {
  const k = kit((force) => ({ removed: true, lock: { ...stale, fresh: force } }));
  await k.call('DELETE', '/api/v1/servers/survival/lock?force=true');
  await k.call('DELETE', '/api/v1/servers/survival/lock?force=false');
  await k.call('DELETE', '/api/v1/servers/survival/lock');
  assert.deepEqual(k.asked, [true, false, false]);
  for (const q of ['force=1', 'force=yes', 'force=TRUE', 'force=']) {
    const r = await k.call('DELETE', `/api/v1/servers/survival/lock?${q}`);
    assert.equal(r.status, 400, q);
    assert.equal(envelopeOf(r).code, 'bad_request');
  }
  assert.equal(k.asked.length, 3);
  assert.equal(k.audits()[0]!.payload && (k.audits()[0]!.payload as { force: boolean }).force, true);
});

test('refusals: a Job holds 409 maintenance_in_progress, a migration lock 409 lock_protected, a fresh lock 409 lock_fresh, unknown 404', async () => {
  for (const [err, status, code] of [
    [new MaintenanceBusyError('backup'), 409, 'maintenance_in_progress'],
    [new LockProtectedError(), 409, 'lock_protected'],
    [new LockFreshError(), 409, 'lock_fresh'],
    [new ServerNotFoundError('survival'), 404, 'not_found'],
  ] as const) {
    const k = kit(() => {
      throw err;
    });
    const r = await k.call('DELETE', '/api/v1/servers/survival/lock');
    assert.equal(r.status, status);
    assert.equal(envelopeOf(r).code, code);
    assert.equal(k.audits().length, 0, 'a refusal is not audited');
  }
});
