import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FakeServerApi } from '../testing/fake-servers.ts';
import { felisServer } from '../testing/felis-fixtures.ts';
import { ArrivalLine, admitWaiting, type Clock, WAIT_FIRST_MS, WAIT_MAX_MS, WaitExpiredError, waitable } from './admission-wait.ts';
import { MaintenanceBusyError, NotStoppedError } from './errors.ts';
import { lockValue } from './holder.ts';
import { WorldLock } from './world-lock.ts';

const LOCK = 'felis.lolicon.best/maintenance';

/** A clock that only moves when something sleeps: sleeps are recorded and pass at once. */
function fakeClock(random = 0.5): Clock & { slept: number[] } {
  let t = 0;
  const slept: number[] = [];
  return {
    slept,
    now: () => t,
    random: () => random,
    async sleep(ms) {
      slept.push(ms);
      t += ms;
      await new Promise((r) => setImmediate(r));
    },
  };
}

const busy = (kind?: string) => new MaintenanceBusyError(kind, kind === 'file-write' ? { op: 'write', path: 'a.txt' } : undefined);

test('waitable: a file mutation holding the world, or a lost race between admissions; nothing else', () => {
  assert.equal(waitable(busy('file-write')), true);
  assert.equal(waitable(busy('config-write')), true);
  assert.equal(waitable(new MaintenanceBusyError(undefined, undefined, { contended: true })), true);
  for (const k of ['backup', 'restore', 'migration', 'export', 'reap']) assert.equal(waitable(busy(k)), false, k);
  assert.equal(waitable(busy()), false, 'a pending restart');
  assert.equal(waitable(new NotStoppedError()), false);
});

test('a file mutation holder is waited out: tries again with growing jittered pauses until admitted', async () => {
  const clock = fakeClock();
  let tries = 0;
  let applied = 0;
  const v = await admitWaiting('s', async () => (++tries < 6 ? Promise.reject(busy('file-write')) : 'in'), { waitMs: 10_000, applied: () => applied++ }, new ArrivalLine(), clock);
  assert.equal(v, 'in');
  assert.equal(tries, 6);
  assert.equal(applied, 1);
  assert.deepEqual(clock.slept, [WAIT_FIRST_MS, 100, 200, 400, WAIT_MAX_MS]);
});

test('jitter spreads the pauses by a quarter either way', async () => {
  for (const [r, first] of [
    [0, 37.5],
    [1, 62.5],
  ] as const) {
    const clock = fakeClock(r);
    let tries = 0;
    await admitWaiting('s', async () => (++tries < 2 ? Promise.reject(busy('file-write')) : 1), { waitMs: 10_000 }, new ArrivalLine(), clock);
    assert.deepEqual(clock.slept, [first]);
  }
});

test('a foreign holder or a running server is refused at once: one try, no pause, not applied', async () => {
  for (const err of [busy('backup'), busy('migration'), busy(), new NotStoppedError()]) {
    const clock = fakeClock();
    let tries = 0;
    let applied = 0;
    await assert.rejects(
      admitWaiting(
        's',
        async () => {
          tries++;
          throw err;
        },
        { waitMs: 10_000, applied: () => applied++ },
        new ArrivalLine(),
        clock,
      ),
      (e) => e === err,
    );
    assert.deepEqual([tries, clock.slept.length, applied], [1, 0, 0]);
  }
  // A holder that turns foreign while we wait (a backup took the world next) ends the wait at once.
  const clock = fakeClock();
  const answers = [busy('file-write'), busy('file-write'), busy('backup')];
  await assert.rejects(
    admitWaiting(
      's',
      async () => {
        throw answers.shift();
      },
      { waitMs: 10_000 },
      new ArrivalLine(),
      clock,
    ),
    (e: MaintenanceBusyError) => e.kind === 'backup',
  );
  assert.equal(answers.length, 0);
});

test('out of time: the 409 the caller would have had, saying it waited, and applied', async () => {
  const clock = fakeClock();
  let applied = 0;
  const last = new MaintenanceBusyError('file-write', { op: 'write', path: 'a.txt' }, { retryAfterSeconds: 4 });
  await assert.rejects(
    admitWaiting(
      's',
      async () => {
        throw last;
      },
      { waitMs: 3000, applied: () => applied++ },
      new ArrivalLine(),
      clock,
    ),
    (e) => {
      assert.ok(e instanceof WaitExpiredError && e instanceof MaintenanceBusyError);
      assert.equal(e.kind, 'file-write');
      // When to try again is the last refusal's.
      assert.equal(e.retryAfterSeconds, 4);
      assert.equal(e.message, "a file write (write of a.txt) is running on this server's world; still held after waiting 3 s: retry once it finishes");
      return true;
    },
  );
  assert.equal(applied, 1);
  assert.ok(clock.now() >= 3000 && clock.now() <= 3000, `waited ${clock.now()} ms`);
});

test('a caller who goes away stops waiting with the last refusal', async () => {
  const ac = new AbortController();
  let tries = 0;
  const clock = fakeClock();
  await assert.rejects(
    admitWaiting(
      's',
      async () => {
        if (++tries === 3) ac.abort();
        throw busy('file-write');
      },
      { waitMs: 10_000, signal: ac.signal },
      new ArrivalLine(),
      clock,
    ),
    (e) => e instanceof MaintenanceBusyError && !(e instanceof WaitExpiredError),
  );
  assert.equal(tries, 3);
});

test('within one instance, waiters are admitted in arrival order; a newcomer queues behind them', async () => {
  const line = new ArrivalLine();
  let free = false;
  const order: string[] = [];
  const admit = (who: string) => async () => {
    if (!free) throw busy('file-write');
    free = false; // the admitted one holds the world until it says
    order.push(who);
    return who;
  };
  const real: Clock = { now: () => Date.now(), random: () => 0.5, sleep: (ms) => new Promise((r) => setTimeout(r, ms)) };
  const a = admitWaiting('s', admit('a'), { waitMs: 5000 }, line, real);
  await new Promise((r) => setTimeout(r, 5));
  const b = admitWaiting('s', admit('b'), { waitMs: 5000 }, line, real);
  await new Promise((r) => setTimeout(r, 5));
  const c = admitWaiting('s', admit('c'), { waitMs: 5000 }, line, real);
  assert.equal(line.waiting('s'), 3);
  assert.equal(line.waiting('other'), 0, "another server's line is its own");
  free = true;
  await a;
  await new Promise((r) => setTimeout(r, 20));
  free = true;
  await b;
  // The world is free now, but a newcomer goes behind c, who is still waiting.
  const d = admitWaiting('s', admit('d'), { waitMs: 5000 }, line, real);
  await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(order, ['a', 'b']);
  free = true;
  await c;
  free = true;
  await d;
  assert.deepEqual(order, ['a', 'b', 'c', 'd']);
  assert.equal(line.waiting('s'), 0);
});

test('WorldLock.run with a wait: admitted once the file-write lock before it is released; a backup lock is refused at once', async () => {
  const api = new FakeServerApi();
  api.put(felisServer('survival', { annotations: { [LOCK]: lockValue('file-write', new Date()) } }));
  const lock = new WorldLock(api, { namespace: 'minecraft' });
  setTimeout(() => api.write('survival', { metadata: { annotations: { [LOCK]: null } } }), 300);
  let applied = 0;
  const t0 = Date.now();
  const seen = await lock.run('survival', 'file-write', async () => api.annotation('survival', LOCK), { waitMs: 5000, applied: () => applied++ });
  assert.match(seen!, /^file-write@/);
  assert.ok(Date.now() - t0 >= 290, 'it waited for the holder');
  assert.equal(applied, 1);
  assert.equal(api.annotation('survival', LOCK), undefined, 'given back');

  api.write('survival', { metadata: { annotations: { [LOCK]: lockValue('backup', new Date()) } } });
  const t1 = Date.now();
  await assert.rejects(
    lock.run('survival', 'file-write', async () => 1, { waitMs: 5000 }),
    (e: MaintenanceBusyError) => e.kind === 'backup',
  );
  assert.ok(Date.now() - t1 < 200, 'refused at once');
});

test('WorldLock.run without a wait refuses a file-write holder at once, as before', async () => {
  const api = new FakeServerApi();
  api.put(felisServer('survival', { annotations: { [LOCK]: lockValue('file-write', new Date()) } }));
  const lock = new WorldLock(api, { namespace: 'minecraft' });
  await assert.rejects(
    lock.run('survival', 'file-write', async () => 1),
    (e: MaintenanceBusyError) => e.kind === 'file-write' && !(e instanceof WaitExpiredError),
  );
});

test('a nudge (this instance gave the world back) wakes a pausing waiter to try at once', async () => {
  const line = new ArrivalLine();
  let free = false;
  let tries = 0;
  // Pauses that would outlast the test: only a nudge (an abort of the pause) ends one.
  const clock: Clock = {
    now: () => 0,
    random: () => 0.5,
    sleep: (_ms, signal) => new Promise<void>((r) => signal?.addEventListener('abort', () => r(), { once: true })),
  };
  const p = admitWaiting(
    's',
    async () => {
      tries++;
      if (!free) throw busy('file-write');
      return 'in';
    },
    { waitMs: 10_000 },
    line,
    clock,
  );
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(tries, 1, 'paused after the first refusal');
  line.nudge('other');
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(tries, 1, "another server's nudge does not wake it");
  free = true;
  line.nudge('s');
  assert.equal(await p, 'in');
  assert.equal(tries, 2);
});

test('WorldLock.run nudges the waiters of its own instance when it gives the world back', async () => {
  const api = new FakeServerApi();
  api.put(felisServer('survival'));
  // Pauses that never end by themselves: only the nudge can admit the waiter.
  const waitClock: Clock = { now: () => 0, random: () => 0.5, sleep: (_ms, signal) => new Promise<void>((r) => signal?.addEventListener('abort', () => r(), { once: true })) };
  const lock = new WorldLock(api, { namespace: 'minecraft', waitClock });
  let releaseFirst!: () => void;
  const first = lock.run('survival', 'file-write', () => new Promise<void>((r) => (releaseFirst = r)));
  await new Promise((r) => setTimeout(r, 20));
  const second = lock.run('survival', 'file-write', async () => 'second ran', { waitMs: 10_000 });
  await new Promise((r) => setTimeout(r, 50));
  releaseFirst();
  await first;
  const timeout = new Promise((r) => setTimeout(() => r('never admitted'), 2000).unref());
  assert.equal(await Promise.race([second, timeout]), 'second ran');
});
