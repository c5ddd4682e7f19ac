import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FakeServerApi } from '../testing/fake-servers.ts';
import { felisGamePod, felisServer } from '../testing/felis-fixtures.ts';
import { LockFreshError, LockProtectedError, MaintenanceBusyError, NotStoppedError, ServerNotFoundError } from './errors.ts';
import { GRACE_MS, lockValue } from './holder.ts';
import { WorldLock } from './world-lock.ts';

const LOCK = 'felis.lolicon.best/maintenance';
const NOW = new Date('2026-11-29T12:00:00Z');
const FAST = { steps: 5, delayMs: 0, jitter: 0 };

function setup(annotations?: Record<string, string>) {
  const api = new FakeServerApi();
  api.put(felisServer('survival', { annotations }));
  const releaseErrors: unknown[] = [];
  const lock = new WorldLock(api, { namespace: 'minecraft', now: () => NOW, retry: FAST, onReleaseError: (e) => releaseErrors.push(e) });
  return { api, lock, releaseErrors };
}
const patches = (api: FakeServerApi) => api.calls.filter((c) => c.startsWith('patch ')).length;

test('an admission whose write meets a Conflict re-reads, and takes the world when it is still free', async () => {
  const { api, lock } = setup();
  let raced = false;
  api.beforePatch = (name) => {
    if (raced) return;
    raced = true;
    api.write(name, { metadata: { labels: { touched: 'yes' } } }); // someone else's unrelated write
  };
  await lock.acquire('survival', 'file-write');
  assert.equal(api.annotation('survival', LOCK), lockValue('file-write', NOW));
  assert.equal(patches(api), 2, 'one refused write, one that landed');
  assert.equal(api.calls.filter((c) => c === 'get survival').length, 2, 'the server was read again after the Conflict');
});

test('an admission that loses the race to another admission re-reads, sees its lock, and is refused as busy', async () => {
  const { api, lock } = setup();
  api.beforePatch = (name) => {
    api.beforePatch = undefined;
    api.write(name, { metadata: { annotations: { [LOCK]: lockValue('backup', NOW) } } });
  };
  await assert.rejects(lock.acquire('survival', 'file-write'), (e: MaintenanceBusyError) => e instanceof MaintenanceBusyError && e.kind === 'backup');
  assert.equal(api.annotation('survival', LOCK), lockValue('backup', NOW), 'the winner keeps its lock');
});

test('a start that loses the race to an admission re-reads and is refused; desired stays Stopped', async () => {
  const { api, lock } = setup();
  api.beforePatch = (name) => {
    api.beforePatch = undefined;
    api.write(name, { metadata: { annotations: { [LOCK]: lockValue('file-write', NOW) } } });
  };
  await assert.rejects(lock.start('survival'), MaintenanceBusyError);
  assert.equal(api.servers.get('survival')!.spec!.desiredState, 'Stopped');
});

test('an admission that meets a Conflict on every attempt gives up after five as busy, never writing blind', async () => {
  const { api, lock } = setup();
  api.beforePatch = (name) => api.write(name, { metadata: { labels: { n: String(Math.random()) } } });
  await assert.rejects(lock.acquire('survival', 'file-write'), MaintenanceBusyError);
  assert.equal(patches(api), 5);
  assert.equal(api.annotation('survival', LOCK), undefined);
});

test('every refusal for a holder says when to retry: a lock by when it lapses, a Job by its kind, a lost race at once', async () => {
  // A backup lock taken 110 s ago lapses in 10 s: the admission and the start both say so.
  const { api, lock } = setup({ [LOCK]: lockValue('backup', new Date(NOW.getTime() - GRACE_MS + 10_000)) });
  const after = (n: number) => (e: unknown) => e instanceof MaintenanceBusyError && e.retryAfterSeconds === n;
  await assert.rejects(lock.acquire('survival', 'file-write'), after(10));
  await assert.rejects(lock.start('survival'), after(10));
  // A file Job: seconds; a restore Job: longer (and an unlock refused by it says the same).
  api.write('survival', { metadata: { annotations: { [LOCK]: null } } });
  const job = (managedBy: string, mode?: string) => ({
    metadata: { name: `j-${managedBy}`, labels: { 'app.kubernetes.io/managed-by': managedBy, 'felis.lolicon.best/server': 'survival', ...(mode ? { 'felis.lolicon.best/files-mode': mode } : {}) } },
    status: {},
  });
  api.jobs = [job('felis-files', 'write')];
  await assert.rejects(lock.acquire('survival', 'file-write'), after(5));
  api.jobs = [job('felis-restore')];
  await assert.rejects(lock.acquire('survival', 'file-write'), after(30));
  await assert.rejects(lock.unlock('survival', { force: true }), after(30));
  // Other admissions winning every race: try again in a second.
  api.jobs = [];
  api.beforePatch = (name) => api.write(name, { metadata: { labels: { n: String(Math.random()) } } });
  await assert.rejects(lock.acquire('survival', 'file-write'), after(1));
});

test('an error other than a Conflict is not retried', async () => {
  const { api, lock } = setup();
  api.beforePatch = () => {
    throw new Error('connection reset');
  };
  await assert.rejects(lock.acquire('survival', 'file-write'), /connection reset/);
  assert.equal(patches(api), 1);
});

test('admission needs a fully stopped server: a terminating game Pod with Felis labels still refuses', async () => {
  const { api, lock } = setup();
  api.pods.push(felisGamePod('survival', { terminating: true }));
  await assert.rejects(lock.acquire('survival', 'file-write'), NotStoppedError);
  api.pods = [felisGamePod('creative')];
  const release = await lock.acquire('survival', 'file-write');
  await release();
  api.write('survival', { status: { phase: 'Stopping' } });
  await assert.rejects(lock.acquire('survival', 'file-write'), NotStoppedError);
});

test('a pending restart (felis.lolicon.best/restart) refuses every admission, a settings save included', async () => {
  const api = new FakeServerApi();
  api.put(felisServer('lobby', { desiredState: 'Running', phase: 'Running', ready: true, annotations: { 'felis.lolicon.best/restart': '2026-11-29T11:59:59.123456789Z' } }));
  const lock = new WorldLock(api, { namespace: 'minecraft', now: () => NOW, retry: FAST });
  await assert.rejects(lock.acquire('lobby', 'config-write'), MaintenanceBusyError);
  api.write('lobby', { metadata: { annotations: { 'felis.lolicon.best/restart': null } } });
  await (await lock.acquire('lobby', 'config-write'))();
});

test('run gives the world back after success and after failure, and reports a failed release without failing the call', async () => {
  const { api, lock, releaseErrors } = setup();
  assert.equal(await lock.run('survival', 'file-write', async () => api.annotation('survival', LOCK)), lockValue('file-write', NOW));
  assert.equal(api.annotation('survival', LOCK), undefined);
  await assert.rejects(
    lock.run('survival', 'file-write', async () => {
      throw new Error('job failed');
    }),
    /job failed/,
  );
  assert.equal(api.annotation('survival', LOCK), undefined);
  const out = await lock.run('survival', 'file-write', async () => {
    api.beforePatch = () => {
      throw new Error('apiserver down');
    };
    return 'written';
  });
  assert.equal(out, 'written');
  assert.equal(releaseErrors.length, 1);
});

test("a release removes only the caller's own lock, never a successor's or a migration lock", async () => {
  const { api, lock } = setup();
  const release = await lock.acquire('survival', 'file-write');
  api.write('survival', { metadata: { annotations: { [LOCK]: lockValue('backup', NOW) } } });
  await release();
  assert.equal(api.annotation('survival', LOCK), lockValue('backup', NOW));
  await lock.release('survival', 'migration@2026-11-29T12:00:00Z');
  assert.equal(api.annotation('survival', LOCK), lockValue('backup', NOW));
});

test('unlock never removes a migration lock, however old, even one nobody can date', async () => {
  for (const value of [lockValue('migration', new Date(NOW.getTime() - 86_400_000)), 'migration@someday']) {
    const { api, lock } = setup({ [LOCK]: value });
    for (const force of [false, true]) await assert.rejects(lock.unlock('survival', { force }), LockProtectedError);
    assert.equal(api.annotation('survival', LOCK), value);
  }
});

test('unlock removes a fresh lock only when forced, and says it was fresh', async () => {
  const value = lockValue('file-write', new Date(NOW.getTime() - 10_000));
  const { api, lock } = setup({ [LOCK]: value });
  await assert.rejects(lock.unlock('survival', { force: false }), LockFreshError);
  assert.equal(api.annotation('survival', LOCK), value);
  const u = await lock.unlock('survival', { force: true });
  assert.deepEqual(u, { removed: true, lock: { kind: 'file-write', since: '2026-11-29T11:59:50Z', value, fresh: true } });
  assert.equal(api.annotation('survival', LOCK), undefined);
});

test('unlock removes a stale, future-dated or undatable lock without force; with none it removes nothing', async () => {
  for (const [value, kind, since] of [
    [lockValue('restore', new Date(NOW.getTime() - GRACE_MS)), 'restore', '2026-11-29T11:58:00Z'],
    [lockValue('backup', new Date(NOW.getTime() + 3600_000)), 'backup', '2026-11-29T13:00:00Z'],
    ['yes', '', null],
  ] as const) {
    const { api, lock } = setup({ [LOCK]: value });
    assert.deepEqual(await lock.unlock('survival', { force: false }), { removed: true, lock: { kind, since, value, fresh: false } }, value);
    assert.equal(api.annotation('survival', LOCK), undefined);
  }
  const { lock } = setup();
  assert.deepEqual(await lock.unlock('survival', { force: false }), { removed: false, lock: null });
  await assert.rejects(lock.unlock('nobody', { force: false }), ServerNotFoundError);
});

test('unlock is refused while a Job holds the world, even with force and a stale lock', async () => {
  const { api, lock } = setup({ [LOCK]: lockValue('file-write', new Date(NOW.getTime() - GRACE_MS * 2)) });
  api.jobs.push({ metadata: { name: 'mc-restore-1', labels: { 'app.kubernetes.io/managed-by': 'felis-restore', 'felis.lolicon.best/server': 'survival' } }, status: {} });
  await assert.rejects(lock.unlock('survival', { force: true }), (e: MaintenanceBusyError) => e instanceof MaintenanceBusyError && e.kind === 'restore');
  assert.notEqual(api.annotation('survival', LOCK), undefined);
});

test('unlock writes under the resourceVersion it read: a lock replaced meanwhile by a migration is judged again and kept', async () => {
  const { api, lock } = setup({ [LOCK]: lockValue('file-write', new Date(NOW.getTime() - GRACE_MS * 2)) });
  const migration = lockValue('migration', NOW);
  api.beforePatch = (name) => {
    api.beforePatch = undefined;
    api.write(name, { metadata: { annotations: { [LOCK]: migration } } });
  };
  await assert.rejects(lock.unlock('survival', { force: true }), LockProtectedError);
  assert.equal(api.annotation('survival', LOCK), migration);
});

test('a write, a start and an unlock refused by a running extraction name it; the kind stays file-write', async () => {
  const { api, lock } = setup();
  api.jobs.push({
    metadata: {
      name: 'felis-files-survival-u1',
      labels: {
        'app.kubernetes.io/managed-by': 'felis-files',
        'felis.lolicon.best/server': 'survival',
        'felis.lolicon.best/files-mode': 'unzip',
        'felis.lolicon.best/files-async': 'true',
      },
      annotations: { 'felis.lolicon.best/files-path': 'plugins/pack.zip' },
    },
    status: {},
  });
  const named = (e: unknown) =>
    e instanceof MaintenanceBusyError && e.kind === 'file-write' && e.message === "an archive extraction (unzip of plugins/pack.zip) is running on this server's world; retry once it finishes";
  await assert.rejects(lock.acquire('survival', 'file-write'), named);
  await assert.rejects(lock.start('survival'), named);
  await assert.rejects(lock.unlock('survival', { force: true }), named);
  assert.equal(patches(api), 0);
});

test('a mutation that keeps its lock leaves it in place to lapse after Grace: a start and another admission are refused until then', async () => {
  const api = new FakeServerApi();
  api.put(felisServer('survival'));
  let now = NOW;
  const kept: string[] = [];
  const lock = new WorldLock(api, { namespace: 'minecraft', now: () => now, retry: FAST, onLockKept: (_s, v) => kept.push(v) });
  await assert.rejects(
    lock.run('survival', 'file-write', async (held) => {
      held.keep();
      throw new Error('the session did not answer');
    }),
    /did not answer/,
  );
  assert.deepEqual(kept, [lockValue('file-write', NOW)]);
  assert.equal(api.annotation('survival', LOCK), lockValue('file-write', NOW));
  await assert.rejects(lock.start('survival'), MaintenanceBusyError);
  await assert.rejects(lock.acquire('survival', 'file-write'), MaintenanceBusyError);
  now = new Date(NOW.getTime() + GRACE_MS + 1000);
  const release = await lock.acquire('survival', 'file-write');
  await release();
  assert.equal(api.annotation('survival', LOCK), undefined);
  // Without keep(), the same run gives the world back on its way out.
  await lock.run('survival', 'file-write', async (held) => assert.equal(held.value, lockValue('file-write', now)));
  assert.equal(api.annotation('survival', LOCK), undefined);
});
