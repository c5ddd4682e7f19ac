/**
 * The guarded start's answers for each kind of holder, and stop always going through.
 */

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { lockValue } from '../lib/maintenance/holder.ts';
import { getServer, setServer } from './support/servers.ts';
import { type Stack, startStack } from './support/stack.ts';

const LOCK = 'felis.lolicon.best/maintenance';
let s: Stack;
before(async () => {
  s = await startStack();
});
after(async () => {
  await s?.close();
});

test('the idle-world reaper holding the world: start is 409 world_reclaiming and desired stays Stopped', async () => {
  await setServer(s.cluster, 'survival', { annotations: { [LOCK]: lockValue('reap', new Date()) } });
  const r = await s.call('POST', '/api/v1/servers/survival/start');
  assert.equal(r.status, 409, r.text);
  assert.equal(r.body.error.code, 'world_reclaiming');
  assert.equal((await getServer(s.cluster, 'survival')).spec.desiredState, 'Stopped');
  // Stopping is always allowed, held or not.
  const stop = await s.call('POST', '/api/v1/servers/survival/stop');
  assert.equal(stop.status, 202, stop.text);
  assert.equal(stop.body.desiredState, 'Stopped');
});

test('a migration lock never lapses, and a start removes a stale lock in the same write', async () => {
  await setServer(s.cluster, 'survival', { annotations: { [LOCK]: lockValue('migration', new Date(Date.now() - 86_400_000)) } });
  const held = await s.call('POST', '/api/v1/servers/survival/start');
  assert.equal(held.status, 409);
  assert.equal(held.body.error.code, 'maintenance_in_progress');
  assert.equal(held.body.error.message, "another operation is running on this server's world; retry once it finishes");

  await setServer(s.cluster, 'survival', { annotations: { [LOCK]: lockValue('file-write', new Date(Date.now() - 3 * 60_000)) } });
  const started = await s.call('POST', '/api/v1/servers/survival/start');
  assert.equal(started.status, 202, started.text);
  const after = await getServer(s.cluster, 'survival');
  assert.equal(after.spec.desiredState, 'Running');
  assert.equal(after.metadata.annotations?.[LOCK], undefined);
  await setServer(s.cluster, 'survival', { desiredState: 'Stopped' });
});

test('start, stop, holder and unlock of an unknown server are 404; a bad name is 400', async () => {
  for (const [m, p] of [
    ['POST', 'start'],
    ['POST', 'stop'],
    ['GET', 'holder'],
    ['DELETE', 'lock'],
  ] as const) {
    const r = await s.call(m, `/api/v1/servers/nobody/${p}`);
    assert.equal(r.status, 404, `${m} ${p}: ${r.text}`);
    assert.equal(r.body.error.code, 'not_found');
    assert.equal((await s.call(m, `/api/v1/servers/No_Such/${p}`)).body.error.code, 'bad_name');
  }
});
