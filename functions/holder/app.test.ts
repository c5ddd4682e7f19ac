import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ServerNotFoundError } from '../../lib/maintenance/errors.ts';
import type { HoldState } from '../../lib/maintenance/holder.ts';
import { FakeServerApi } from '../../lib/testing/fake-servers.ts';
import { felisServer } from '../../lib/testing/felis-fixtures.ts';
import { envelopeOf, routeKit } from '../../lib/testing/route-kit.ts';
import { holderRoutes } from './app.ts';

const LOCK = 'felis.lolicon.best/maintenance';

test("one server's holder: a Job holder with its name and start, a free world, a stale lock", async () => {
  const states: Record<string, HoldState> = {
    a: { holder: { kind: 'backup', source: 'job', job: 'mc-backup-1', since: '2026-11-29T10:00:00Z' } },
    b: {},
    c: { staleLock: 'restore@2026-11-29T08:00:00Z' },
  };
  const k = routeKit(holderRoutes, {
    lock: {
      inspect: async (name: string) => {
        if (!(name.slice(-1) in states)) throw new ServerNotFoundError(name);
        return { server: felisServer(name), state: states[name.slice(-1)]! };
      },
    },
  });
  assert.deepEqual((await k.call('GET', '/api/v1/servers/srv-a/holder')).body, { held: true, kind: 'backup', source: 'job', job: 'mc-backup-1', since: '2026-11-29T10:00:00Z' });
  assert.deepEqual((await k.call('GET', '/api/v1/servers/srv-b/holder')).body, { held: false });
  assert.deepEqual((await k.call('GET', '/api/v1/servers/srv-c/holder')).body, { held: false, stale_lock: 'restore@2026-11-29T08:00:00Z' });
  const nf = await k.call('GET', '/api/v1/servers/srv-z/holder');
  assert.equal(nf.status, 404);
  assert.deepEqual(envelopeOf(nf), { code: 'not_found', message: 'no such server' });
  assert.equal(envelopeOf(await k.call('GET', '/api/v1/servers/SRV/holder')).code, 'bad_name');
});

test('the overview lists only held servers and stale locks', async () => {
  const api = new FakeServerApi();
  api.put(felisServer('free'));
  api.put(felisServer('busy', { annotations: { [LOCK]: `file-write@${new Date().toISOString().slice(0, 19)}Z` } }));
  const k = routeKit(holderRoutes, { servers: api });
  const r = await k.call('GET', '/api/v1/holders');
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.holders.length, 1);
  assert.equal(r.body.holders[0].server, 'busy');
  assert.equal(r.body.holders[0].kind, 'file-write');
  assert.equal(r.body.holders[0].source, 'lock');
});

test('every route but health needs the bearer token', async () => {
  const k = routeKit(holderRoutes);
  const r = await k.app.request('/api/v1/holders');
  assert.equal(r.status, 401);
  const body = (await r.json()) as { error: { code: string } };
  assert.equal(body.error.code, 'unauthorized');
  assert.equal((await k.app.request('/healthz')).status, 200);
});
