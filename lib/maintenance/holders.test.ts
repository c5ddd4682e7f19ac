import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FakeServerApi } from '../testing/fake-servers.ts';
import { felisServer } from '../testing/felis-fixtures.ts';
import { lockValue } from './holder.ts';
import { listHolders } from './holders.ts';

const LOCK = 'felis.lolicon.best/maintenance';
const NOW = new Date('2026-11-29T12:00:00Z');

test('the overview lists held servers and stale locks by name, from two list calls', async () => {
  const api = new FakeServerApi();
  api.put(felisServer('zeta', { annotations: { [LOCK]: lockValue('file-write', NOW) } }));
  api.put(felisServer('alpha'));
  api.put(felisServer('free'));
  api.put(felisServer('old', { annotations: { [LOCK]: lockValue('restore', new Date(NOW.getTime() - 3600_000)) } }));
  api.jobs.push({ metadata: { name: 'mc-backup-1', labels: { 'app.kubernetes.io/managed-by': 'felis-backup', 'felis.lolicon.best/server': 'alpha' } }, status: {} });
  const h = await listHolders(api, 'minecraft', NOW);
  assert.deepEqual(
    h.map((x) => x.server),
    ['alpha', 'old', 'zeta'],
  );
  assert.equal(h[0]!.state.holder?.kind, 'backup');
  assert.equal(h[0]!.state.holder?.job, 'mc-backup-1');
  assert.equal(h[1]!.state.holder, undefined);
  assert.match(h[1]!.state.staleLock!, /^restore@/);
  assert.equal(h[2]!.state.holder?.source, 'lock');
  assert.deepEqual(api.calls.sort(), ['list jobs felis.lolicon.best/server', 'list servers']);
});
