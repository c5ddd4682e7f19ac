import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { EditChannel } from '../files/edit-channel.ts';
import { type EditorConfig, FilesEditor } from '../files/editor.ts';
import type { FileAccess } from '../files/gates.ts';
import { heldLock } from '../files/held-lock.ts';
import type { SyncRunner } from '../runner/sync-runner.ts';
import { FakeServerApi } from '../testing/fake-servers.ts';
import { felisServer } from '../testing/felis-fixtures.ts';
import { MaintenanceBusyError, NotStoppedError, NoWorldVolumeError, ServerNotFoundError, VolumeExclusiveError } from './errors.ts';
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

test('entry: unknown server, a change of a running server, no world volume, each refused before any lock', async () => {
  const api = new FakeServerApi();
  const gates = new MaintenanceGates(api, new WorldLock(api, { namespace: 'minecraft' }));
  await assert.rejects(gates.enter('nobody', { op: 'list', path: '' }), ServerNotFoundError);
  api.put(felisServer('running', { desiredState: 'Running', phase: 'Running', ready: true }));
  await assert.rejects(gates.enter('running', { op: 'write', path: 'a' }), NotStoppedError);
  api.put(felisServer('fresh'));
  await assert.rejects(gates.enter('fresh', { op: 'list', path: '' }), NoWorldVolumeError);
  api.put(felisServer('lobby', { desiredState: 'Running', phase: 'Running', ready: true }));
  api.claims.add('world-lobby-0');
  await gates.enter('lobby', { op: 'write', path: 'felis-experience.json' });
  await assert.rejects(gates.enter('lobby', { op: 'write', path: 'server.properties' }), NotStoppedError);
  assert.equal(
    api.calls.some((c) => c.startsWith('patch')),
    false,
  );
});

const RUNNING = { desiredState: 'Running', phase: 'Running', ready: true, statusNodeName: 'node-b' } as const;
const READS = [
  { op: 'list', path: '' },
  { op: 'read', path: 'world/region/r.0.0.mca' },
  { op: 'search', path: 'world' },
  { op: 'trash-list', path: '.' },
] as const;
const CHANGES = [
  { op: 'write', path: 'a.txt' },
  { op: 'mkdir', path: 'd' },
  { op: 'delete', path: 'a.txt' },
  { op: 'rename', path: 'a.txt' },
  { op: 'upload', path: 'a.txt' },
  { op: 'unzip', path: 'a.zip' },
  { op: 'zip', path: 'world' },
  { op: 'copy', path: 'a.txt' },
  { op: 'delete-many', path: '.' },
  { op: 'move-many', path: '.' },
  { op: 'chmod-many', path: '.' },
  { op: 'pull', path: '' },
  { op: 'compress', path: '.' },
  { op: 'trash-restore', path: '.' },
  { op: 'trash-purge', path: '.' },
] as const;

test('reads of a running or starting server are let in, pinned to its node and marked running; every change is still not_stopped', async () => {
  const api = new FakeServerApi();
  const gates = new MaintenanceGates(api, new WorldLock(api, { namespace: 'minecraft' }));
  api.put(felisServer('survival', RUNNING));
  api.put(felisServer('starting', { desiredState: 'Running', phase: 'Starting', ready: false }));
  api.claims.add('world-survival-0');
  api.claims.add('world-starting-0');
  for (const access of READS) {
    assert.deepEqual(await gates.enter('survival', access), { server: 'survival', world: { claim: 'world-survival-0', node: 'node-b' }, worldState: 'running' }, access.op);
    assert.equal((await gates.enter('starting', access)).worldState, 'running', access.op);
  }
  for (const access of CHANGES) await assert.rejects(gates.enter('survival', access), NotStoppedError, access.op);
  // A server still stopping passes the entry as before, and is still marked running: the game may be saving.
  api.put(felisServer('stopping', { desiredState: 'Stopped', phase: 'Stopping', ready: false }));
  api.claims.add('world-stopping-0');
  assert.equal((await gates.enter('stopping', { op: 'list', path: '' })).worldState, 'running');
  api.put(felisServer('stopped'));
  api.claims.add('world-stopped-0');
  assert.equal((await gates.enter('stopped', { op: 'list', path: '' })).worldState, 'stopped');
  // Reads take no lock, whatever the state.
  assert.equal(
    api.calls.some((c) => c.startsWith('patch')),
    false,
  );
});

test('a running server whose claim is ReadWriteOncePod: a read is volume_exclusive (naming why); stopped, or any other mode, it is read', async () => {
  const api = new FakeServerApi();
  const gates = new MaintenanceGates(api, new WorldLock(api, { namespace: 'minecraft' }));
  api.put(felisServer('survival', RUNNING));
  api.claims.add('world-survival-0');
  api.claimModes.set('world-survival-0', ['ReadWriteOncePod']);
  for (const access of READS) {
    await assert.rejects(gates.enter('survival', access), (e: unknown) => {
      assert.ok(e instanceof VolumeExclusiveError, String(e));
      assert.equal(e.code, 'volume_exclusive');
      assert.match(e.callerMessage, /ReadWriteOncePod: only the running game's Pod may mount it, so its files cannot be read while the server runs; stop the server first/);
      return true;
    });
  }
  // A change meets not_stopped first, as it always has.
  await assert.rejects(gates.enter('survival', { op: 'write', path: 'a' }), NotStoppedError);
  // Stopped, nothing else has the claim: read as before.
  api.write('survival', { spec: { desiredState: 'Stopped' }, status: { phase: 'Stopped', ready: false } });
  assert.equal((await gates.enter('survival', { op: 'read', path: 'a' })).worldState, 'stopped');
  // Shared modes are read beside the game.
  api.write('survival', { spec: { desiredState: 'Running' }, status: { phase: 'Running', ready: true } });
  for (const modes of [['ReadWriteOnce'], ['ReadWriteMany'], ['ReadOnlyMany', 'ReadWriteOnce'], []]) {
    api.claimModes.set('world-survival-0', modes);
    assert.equal((await gates.enter('survival', { op: 'list', path: '' })).worldState, 'running', modes.join());
  }
});

test("readWhileRunning off: Felis's gate, every file call of a running server is not_stopped but the live experience file", async () => {
  const api = new FakeServerApi();
  const gates = new MaintenanceGates(api, new WorldLock(api, { namespace: 'minecraft' }), { readWhileRunning: false });
  api.put(felisServer('survival', RUNNING));
  api.claims.add('world-survival-0');
  for (const access of [...READS, ...CHANGES]) await assert.rejects(gates.enter('survival', access), NotStoppedError, access.op);
  api.put(felisServer('lobby', RUNNING));
  api.claims.add('world-lobby-0');
  assert.equal((await gates.enter('lobby', { op: 'read', path: 'felis-experience.json' })).worldState, 'running');
  await gates.enter('lobby', { op: 'write', path: 'felis-experience.json' });
  await assert.rejects(gates.enter('lobby', { op: 'read', path: 'server.properties' }), NotStoppedError);
});

test("run locks a running system server's settings save as config-write and gives the world back", async () => {
  const api = new FakeServerApi();
  api.put(felisServer('lobby', { desiredState: 'Running', phase: 'Running', ready: true }));
  const gates = new MaintenanceGates(api, new WorldLock(api, { namespace: 'minecraft' }));
  const seen = await gates.run('lobby', { op: 'write', path: 'felis-experience.json' }, async () => api.annotation('lobby', LOCK));
  assert.match(seen!, /^config-write@/);
  assert.equal(api.annotation('lobby', LOCK), undefined);
  await assert.rejects(
    gates.run('lobby', { op: 'write', path: 'other.json' }, async () => 1),
    NotStoppedError,
  );
});

test('a write reads its MinecraftServer once, for the gates and the admission; the release is one conditional write', async () => {
  const api = new FakeServerApi();
  api.put(felisServer('survival'));
  api.claims.add('world-survival-0');
  const gates = new MaintenanceGates(api, new WorldLock(api, { namespace: 'minecraft' }));
  const access = { op: 'write' as const, path: 'a.txt' };
  const entered = await gates.enter('survival', access);
  const held = await gates.run('survival', access, async () => api.annotation('survival', LOCK), { entered });
  assert.match(held!, /^file-write@/);
  assert.equal(api.annotation('survival', LOCK), undefined);
  assert.deepEqual(
    api.calls.filter((c) => c.startsWith('get survival') || c.startsWith('patch')),
    ['get survival', 'patch survival', 'patch survival'],
  );
});

test('a server changed between the entry and the admission is read again and judged afresh', async () => {
  const api = new FakeServerApi();
  api.put(felisServer('survival'));
  api.claims.add('world-survival-0');
  const gates = new MaintenanceGates(api, new WorldLock(api, { namespace: 'minecraft' }));
  const access = { op: 'write' as const, path: 'a.txt' };
  const entered = await gates.enter('survival', access);
  // Started after the gates let the call through: the admission's patch meets a newer resourceVersion.
  api.write('survival', { spec: { desiredState: 'Running' } });
  let ran = false;
  await assert.rejects(
    gates.run('survival', access, async () => (ran = true), { entered }),
    NotStoppedError,
  );
  assert.equal(ran, false);
  assert.equal(api.annotation('survival', LOCK), undefined);
  assert.deepEqual(
    api.calls.filter((c) => c.startsWith('get survival') || c.startsWith('patch')),
    ['get survival', 'patch survival', 'get survival'],
  );
});

/** A FakeServerApi whose reads wait until the test lets them answer, to see what is in flight at once. */
class HeldReads extends FakeServerApi {
  readonly inFlight: string[] = [];
  readonly #release: (() => void)[] = [];
  claimError: Error | undefined;
  async #hold(what: string): Promise<void> {
    this.inFlight.push(what);
    await new Promise<void>((r) => this.#release.push(r));
  }
  releaseAll(): void {
    for (const r of this.#release.splice(0)) r();
  }
  override async getServer(ns: string, name: string) {
    await this.#hold(`get ${name}`);
    return super.getServer(ns, name);
  }
  override async getClaim(ns: string, claim: string) {
    await this.#hold(`get pvc ${claim}`);
    if (this.claimError) throw this.claimError;
    return super.getClaim(ns, claim);
  }
}

/** Waits (a few event-loop turns at a time, at most 2 s) until `cond` holds; fails the test otherwise. */
async function until(cond: () => boolean, what: string): Promise<void> {
  const end = Date.now() + 2_000;
  while (!cond()) {
    if (Date.now() > end) assert.fail(`never happened: ${what}`);
    await new Promise((r) => setTimeout(r, 1));
  }
}

async function enterWhenBothAsked(api: HeldReads, name: string, access: FileAccess = { op: 'read', path: 'a' }) {
  const gates = new MaintenanceGates(api, new WorldLock(api, { namespace: 'minecraft' }));
  const from = api.inFlight.length;
  const entered = gates.enter(name, access);
  // Both reads are asked for before either answers.
  await until(() => api.inFlight.length >= from + 2, 'the server and the claim asked for together');
  const asked = api.inFlight.slice(from).sort();
  api.releaseAll();
  return { entered, asked };
}

test('entry reads the server and its default world claim at the same time', async () => {
  const api = new HeldReads();
  api.put(felisServer('survival'));
  api.claims.add('world-survival-0');
  const { entered, asked } = await enterWhenBothAsked(api, 'survival');
  assert.deepEqual(asked, ['get pvc world-survival-0', 'get survival']);
  assert.deepEqual(await entered, { server: 'survival', world: { claim: 'world-survival-0', node: undefined }, worldState: 'stopped' });
});

test('entry keeps its refusal order whatever the concurrent claim read says', async () => {
  // Unknown server: not_found, even though the claim read failed outright.
  let api = new HeldReads();
  api.claimError = new Error('apiserver down');
  await assert.rejects((await enterWhenBothAsked(api, 'nobody')).entered, ServerNotFoundError);
  // A change of a running server without a claim: not_stopped before no_world_volume.
  api = new HeldReads();
  api.put(felisServer('running', { desiredState: 'Running', phase: 'Running', ready: true }));
  await assert.rejects((await enterWhenBothAsked(api, 'running', { op: 'write', path: 'a' })).entered, NotStoppedError);
  // Stopped server, the claim read failed: that failure, not a made-up answer.
  api = new HeldReads();
  api.put(felisServer('broken'));
  api.claimError = new Error('apiserver down');
  await assert.rejects((await enterWhenBothAsked(api, 'broken')).entered, /apiserver down/);
});

test('a server naming its own claim has that claim checked, not the default one', async () => {
  const api = new HeldReads();
  api.put(felisServer('custom', { claimName: 'my-world' }));
  api.claims.add('world-custom-0');
  const { entered } = await enterWhenBothAsked(api, 'custom');
  // The named claim is read after the server; let it answer too.
  const settled = entered.then(
    () => 'entered',
    (e: unknown) => e,
  );
  await until(() => api.inFlight.includes('get pvc my-world'), 'the named claim asked for');
  api.releaseAll();
  assert.ok((await settled) instanceof NoWorldVolumeError);
  api.claims.add('my-world');
  const again = await enterWhenBothAsked(api, 'custom');
  await until(() => api.inFlight.filter((x) => x === 'get pvc my-world').length === 2, 'the named claim asked for again');
  api.releaseAll();
  assert.deepEqual(await again.entered, { server: 'custom', world: { claim: 'my-world', node: undefined }, worldState: 'stopped' });
});

test('a mutation runs knowing the lock it holds (kind and value as written), and nothing outside it does', async () => {
  const api = new FakeServerApi();
  api.put(felisServer('survival'));
  api.claims.add('world-survival-0');
  const gates = new MaintenanceGates(api, new WorldLock(api, { namespace: 'minecraft' }));
  const t = await gates.enter('survival', { op: 'write', path: 'a.txt' });
  const seen = await gates.run('survival', { op: 'write', path: 'a.txt' }, async () => ({ held: heldLock('survival'), other: heldLock('lobby'), annotation: api.annotation('survival', LOCK) }), {
    entered: t,
  });
  assert.equal(seen.held?.kind, 'file-write');
  assert.equal(seen.held?.value, seen.annotation);
  assert.match(seen.held!.value, /^file-write@\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  assert.equal(seen.other, undefined);
  assert.equal(heldLock('survival'), undefined);
});

test('20 concurrent small changes through an edit session: each admitted alone (one call in flight at a time), the rest refused as busy, nothing left held', async () => {
  const api = new FakeServerApi();
  api.put(felisServer('survival'));
  api.claims.add('world-survival-0');
  const gates = new MaintenanceGates(api, new WorldLock(api, { namespace: 'minecraft', retry: { steps: 5, delayMs: 1, jitter: 0 } }));
  let inFlight = 0;
  let most = 0;
  const locks: string[] = [];
  const edits: EditChannel = {
    async run(_t, call) {
      inFlight++;
      most = Math.max(most, inFlight);
      locks.push(call.lock);
      // The lock the call carries is the one on the server while it runs.
      assert.equal(api.annotation('survival', LOCK), call.lock);
      await new Promise((r) => setTimeout(r, 2));
      inFlight--;
      return '{"sha256":"' + 'a'.repeat(64) + '"}';
    },
  };
  const cfg = { namespace: 'minecraft', image: 'img', command: ['felis', 'files'], serviceAccount: 'sa', worldsRoot: '/data', deadlineSeconds: 60, ttlSeconds: 60, timeoutMs: 5_000 } as EditorConfig;
  const editor = new FilesEditor(cfg, {} as SyncRunner, undefined, undefined, edits);
  const access = { op: 'write' as const, path: 'a.txt' };
  const answers = await Promise.allSettled(
    Array.from({ length: 20 }, async () => {
      const t = await gates.enter('survival', access);
      return gates.run('survival', access, () => editor.write(t, 'a.txt', Buffer.from('x'), { sha256: 'b'.repeat(64) }), { entered: t });
    }),
  );
  const made = answers.filter((a) => a.status === 'fulfilled').length;
  assert.ok(made >= 1);
  assert.equal(most, 1, 'never two changes in flight');
  assert.equal(locks.length, made, 'one call per admitted change');
  for (const a of answers) if (a.status === 'rejected') assert.ok(a.reason instanceof MaintenanceBusyError, String(a.reason));
  assert.equal(api.annotation('survival', LOCK), undefined);
});

test("the held lock a change reads is the world's lock as the line last re-dated it, not a copy of the first", async (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] });
  const api = new FakeServerApi();
  api.put(felisServer('survival'));
  api.claims.add('world-survival-0');
  let now = Date.now();
  const gates = new MaintenanceGates(api, new WorldLock(api, { namespace: 'minecraft', joinChanges: true, now: () => new Date(now), retry: { steps: 5, delayMs: 1, jitter: 0 } }));
  const t0 = await gates.enter('survival', { op: 'upload', path: '' });
  let release!: () => void;
  const hold = new Promise<void>((r) => (release = r));
  let first: string | undefined;
  const run = gates.run(
    'survival',
    { op: 'upload', path: '' },
    async () => {
      first = heldLock('survival')!.value;
      await hold;
      return { later: heldLock('survival')!.value, annotation: api.annotation('survival', LOCK) };
    },
    { entered: t0 },
  );
  for (let i = 0; i < 100 && first === undefined; i++) await new Promise((r) => setTimeout(r, 5));
  now += 40_000;
  t.mock.timers.tick(30_000);
  for (let i = 0; i < 100 && api.annotation('survival', LOCK) === first; i++) await new Promise((r) => setTimeout(r, 5));
  await new Promise((r) => setTimeout(r, 20));
  release();
  const seen = await run;
  assert.notEqual(seen.later, first);
  assert.equal(seen.later, seen.annotation);
});
