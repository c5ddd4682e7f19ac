import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MaintenanceBusyError, ServerNotFoundError } from '../../lib/maintenance/errors.ts';
import { felisServer } from '../../lib/testing/felis-fixtures.ts';
import { envelopeOf, routeKit } from '../../lib/testing/route-kit.ts';
import { startRoutes } from './app.ts';

function kit(startError?: Error) {
  const started: string[] = [];
  const stopped: string[] = [];
  const k = routeKit(startRoutes, {
    lock: {
      start: async (name: string) => {
        if (startError) throw startError;
        started.push(name);
        return felisServer(name, { desiredState: 'Running' });
      },
      stop: async (name: string) => {
        if (name === 'nobody') throw new ServerNotFoundError(name);
        stopped.push(name);
        return felisServer(name, { phase: 'Stopping' });
      },
    },
  });
  return { ...k, started, stopped };
}

test('a start answers 202 with the new desired state; a stop always goes through', async () => {
  const k = kit();
  const r = await k.call('POST', '/api/v1/servers/survival/start');
  assert.equal(r.status, 202, r.text);
  assert.deepEqual(r.body, { name: 'survival', desiredState: 'Running', phase: 'Stopped', ready: false });
  const s = await k.call('POST', '/api/v1/servers/survival/stop');
  assert.equal(s.status, 202);
  assert.deepEqual(s.body, { name: 'survival', desiredState: 'Stopped', phase: 'Stopping', ready: false });
  assert.deepEqual([k.started, k.stopped], [['survival'], ['survival']]);
});

test('a held world refuses a start with 409 maintenance_in_progress; the idle-world reaper with world_reclaiming', async () => {
  const held = await kit(new MaintenanceBusyError('restore')).call('POST', '/api/v1/servers/survival/start');
  assert.equal(held.status, 409);
  assert.deepEqual(envelopeOf(held), { code: 'maintenance_in_progress', message: "a restore is running on this server's world; retry once it finishes" });
  const reaped = await kit(new MaintenanceBusyError('reap')).call('POST', '/api/v1/servers/survival/start');
  assert.equal(reaped.status, 409);
  assert.equal(envelopeOf(reaped).code, 'world_reclaiming');
  const restart = await kit(new MaintenanceBusyError()).call('POST', '/api/v1/servers/survival/start');
  assert.equal(envelopeOf(restart).message, "another operation is running on this server's world; retry once it finishes");
});

test('an unknown server is 404; a bad name 400 before any call', async () => {
  const k = kit(new ServerNotFoundError('nobody'));
  assert.equal((await k.call('POST', '/api/v1/servers/nobody/start')).status, 404);
  assert.equal((await k.call('POST', '/api/v1/servers/nobody/stop')).status, 404);
  const bad = await k.call('POST', '/api/v1/servers/a_b/stop');
  assert.equal(bad.status, 400);
  assert.equal(envelopeOf(bad).code, 'bad_name');
  assert.equal(k.stopped.length, 0);
});
