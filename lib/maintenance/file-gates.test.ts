import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeServerApi } from '../testing/fake-servers.ts';
import { felisServer } from '../testing/felis-fixtures.ts';
import { NotStoppedError, NoWorldVolumeError, ServerNotFoundError } from './errors.ts';
import { isLiveExperienceFile, lockKindFor, MaintenanceGates } from './file-gates.ts';
import { WorldLock } from './world-lock.ts';

const LOCK = 'felis.lolicon.best/maintenance';

test('the live experience file is exactly felis-experience.json, read or written, on login or lobby', () => {
  assert.equal(isLiveExperienceFile('lobby', { op: 'read', path: 'felis-experience.json' }), true);
  assert.equal(isLiveExperienceFile('login', { op: 'write', path: 'felis-experience.json' }), true);
  assert.equal(isLiveExperienceFile('lobby', { op: 'read', path: './felis-experience.json' }), false);
  assert.equal(isLiveExperienceFile('lobby', { op: 'delete', path: 'felis-experience.json' }), false);
  assert.equal(isLiveExperienceFile('lobby', { op: 'list', path: '' }), false);
  assert.equal(isLiveExperienceFile('survival', { op: 'write', path: 'felis-experience.json' }), false);
  assert.equal(lockKindFor('lobby', { op: 'write', path: 'felis-experience.json' }), 'config-write');
  assert.equal(lockKindFor('lobby', { op: 'mkdir', path: 'felis-experience.json' }), 'file-write');
});

test('entry: unknown server, running server, no world volume, each refused before any lock', async () => {
  const api = new FakeServerApi();
  const gates = new MaintenanceGates(api, new WorldLock(api, { namespace: 'minecraft' }));
  await assert.rejects(gates.enter('nobody', { op: 'list', path: '' }), ServerNotFoundError);
  api.put(felisServer('running', { desiredState: 'Running', phase: 'Running', ready: true }));
  await assert.rejects(gates.enter('running', { op: 'read', path: 'a' }), NotStoppedError);
  api.put(felisServer('fresh'));
  await assert.rejects(gates.enter('fresh', { op: 'list', path: '' }), NoWorldVolumeError);
  api.put(felisServer('lobby', { desiredState: 'Running', phase: 'Running', ready: true }));
  api.claims.add('world-lobby-0');
  await gates.enter('lobby', { op: 'write', path: 'felis-experience.json' });
  await assert.rejects(gates.enter('lobby', { op: 'read', path: 'server.properties' }), NotStoppedError);
  assert.equal(api.calls.some((c) => c.startsWith('patch')), false);
});

test("run locks a running system server's settings save as config-write and gives the world back", async () => {
  const api = new FakeServerApi();
  api.put(felisServer('lobby', { desiredState: 'Running', phase: 'Running', ready: true }));
  const gates = new MaintenanceGates(api, new WorldLock(api, { namespace: 'minecraft' }));
  const seen = await gates.run('lobby', { op: 'write', path: 'felis-experience.json' }, async () => api.annotation('lobby', LOCK));
  assert.match(seen!, /^config-write@/);
  assert.equal(api.annotation('lobby', LOCK), undefined);
  await assert.rejects(gates.run('lobby', { op: 'write', path: 'other.json' }, async () => 1), NotStoppedError);
});
