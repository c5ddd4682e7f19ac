/**
 * Changes that join, through WorldLock with the line on, over the in-memory ServerApi (resourceVersions
 * and 409 Conflicts as the apiserver's): concurrent changes all run, one at a time, in arrival order;
 * foreign holders are refused with a Retry-After; the waits are bounded; a start drains the line.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Job } from '@kubernetes/client-node';
import { FakeServerApi } from '../testing/fake-servers.ts';
import { felisServer } from '../testing/felis-fixtures.ts';
import { MaintenanceBusyError } from './errors.ts';
import { lockValue } from './holder.ts';
import { WorldLock } from './world-lock.ts';
import { formatQueue, MAX_WAITING, newTicket, parseQueue, TICKET_LEASE_MS } from './world-queue.ts';

const LOCK = 'felis.lolicon.best/maintenance';
const QUEUE = 'felis.lolicon.best/files-queue';
const RETRY = { steps: 5, delayMs: 1, jitter: 0.5 };

function setup() {
  const api = new FakeServerApi();
  api.put(felisServer('survival'));
  const lock = new WorldLock(api, { namespace: 'minecraft', retry: RETRY, joinChanges: true });
  return { api, lock };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A background change of felis-world's own (an extraction), running until `done` is set. */
function ourJob(name: string, done = false): V1Job {
  return {
    metadata: {
      name,
      labels: { 'app.kubernetes.io/managed-by': 'felis-files', 'felis.lolicon.best/server': 'survival', 'felis.lolicon.best/files-mode': 'unzip', 'felis.lolicon.best/files-async': 'true' },
      annotations: { 'felis.lolicon.best/files-path': 'pack.zip', 'felis.lolicon.best/files-change': 'felis-world' },
    },
    status: done ? { conditions: [{ type: 'Complete', status: 'True' }], succeeded: 1 } : { active: 1 },
  };
}

test('eight changes at once all run, one at a time, in the order they joined; the last gives the world back', async () => {
  const { api, lock } = setup();
  const ran: number[] = [];
  let inside = 0;
  let most = 0;
  const change = (i: number) =>
    lock.run('survival', 'file-write', async (held) => {
      inside++;
      most = Math.max(most, inside);
      assert.match(held.value, /^file-write@/);
      assert.equal(api.annotation('survival', LOCK), held.value, 'it runs under the lock Felis sees');
      ran.push(i);
      await sleep(15);
      inside--;
      return i;
    });
  // Each joins a little after the one before, so the order they joined is known.
  const all: Promise<number>[] = [];
  for (let i = 0; i < 8; i++) {
    all.push(change(i));
    await sleep(3);
  }
  assert.deepEqual(await Promise.all(all), [0, 1, 2, 3, 4, 5, 6, 7]);
  assert.equal(most, 1, 'never two at once');
  assert.deepEqual(ran, [0, 1, 2, 3, 4, 5, 6, 7]);
  assert.equal(api.annotation('survival', LOCK), undefined);
  assert.equal(api.annotation('survival', QUEUE), undefined);
});

test('a holder that is not ours is refused at once, with a Retry-After from its lock', async () => {
  const { api, lock } = setup();
  const now = new Date();
  api.write('survival', { metadata: { annotations: { [LOCK]: lockValue('backup', new Date(now.getTime() - 30_000)) } } });
  await assert.rejects(
    lock.run('survival', 'file-write', async () => 'ran'),
    (e: MaintenanceBusyError) => e instanceof MaintenanceBusyError && e.kind === 'backup',
  );
  assert.equal(api.annotation('survival', QUEUE), undefined, 'no line was started');
});

test("a background change of ours still running is waited for in turn; one of Felis's own shape is refused", async () => {
  const { api, lock } = setup();
  api.jobs = [ourJob('files-survival-unzip')];
  let ran = false;
  const p = lock.run('survival', 'file-write', async () => {
    ran = true;
  });
  await sleep(150);
  assert.equal(ran, false, 'it waits while the extraction runs');
  api.jobs = [ourJob('files-survival-unzip', true)];
  await p;
  assert.equal(ran, true);
  // The same Job without felis-world's annotation: Felis's own file Job, a holder like any.
  const foreign = ourJob('files-survival-felis');
  delete foreign.metadata!.annotations!['felis.lolicon.best/files-change'];
  api.jobs = [foreign];
  await assert.rejects(
    lock.run('survival', 'file-write', async () => 'ran'),
    MaintenanceBusyError,
  );
});

test('a change waits at most its bound, then is refused with a Retry-After and leaves the line', async () => {
  const { api, lock } = setup();
  let release!: () => void;
  const first = lock.run('survival', 'file-write', () => new Promise<void>((r) => (release = r)));
  await sleep(20);
  await assert.rejects(
    lock.run('survival', 'file-write', async () => 'never', { waitMs: 200 }),
    (e: MaintenanceBusyError) => e instanceof MaintenanceBusyError && (e.retryAfterSeconds ?? 0) >= 1 && /waited/.test(e.message),
  );
  assert.equal(parseQueue(api.annotation('survival', QUEUE))!.tickets.length, 1, 'only the running change is left in line');
  release();
  await first;
  assert.equal(api.annotation('survival', LOCK), undefined);
});

test('a full line refuses the next change with a Retry-After', async () => {
  const { api, lock } = setup();
  const now = Date.now();
  const held = lockValue('file-write', new Date(now));
  const tickets = Array.from({ length: MAX_WAITING + 1 }, (_, i) => newTicket(i.toString(16).padStart(16, '0'), now));
  api.write('survival', { metadata: { annotations: { [LOCK]: held, [QUEUE]: formatQueue({ lock: held, tickets }) } } });
  await assert.rejects(
    lock.run('survival', 'file-write', async () => 'ran'),
    (e: MaintenanceBusyError) => e instanceof MaintenanceBusyError && e.retryAfterSeconds === 5,
  );
});

test('a ticket whose function died lapses after its lease; the next change runs', async () => {
  const { api, lock } = setup();
  const now = Date.now();
  const held = lockValue('file-write', new Date(now));
  const dead = { ...newTicket('dead00000000dead', now - TICKET_LEASE_MS), exp: now - 1 };
  api.write('survival', { metadata: { annotations: { [LOCK]: held, [QUEUE]: formatQueue({ lock: held, tickets: [dead] }) } } });
  assert.equal(await lock.run('survival', 'file-write', async () => 'ran'), 'ran');
  assert.equal(api.annotation('survival', LOCK), undefined);
});

test('a start waits for the running change, lets no new one join meanwhile, then starts', async () => {
  const { api, lock } = setup();
  let release!: () => void;
  const first = lock.run('survival', 'file-write', () => new Promise<void>((r) => (release = r)));
  await sleep(20);
  const start = lock.start('survival');
  await sleep(120);
  assert.equal(api.servers.get('survival')!.spec!.desiredState, 'Stopped', 'not while a change runs');
  await assert.rejects(
    lock.run('survival', 'file-write', async () => 'late'),
    (e: MaintenanceBusyError) => e instanceof MaintenanceBusyError && /start .* is waiting/.test(e.message) && (e.retryAfterSeconds ?? 0) >= 1,
  );
  release();
  await first;
  await start;
  assert.equal(api.servers.get('survival')!.spec!.desiredState, 'Running');
  assert.equal(api.annotation('survival', LOCK), undefined);
  assert.equal(api.annotation('survival', QUEUE), undefined);
});

test('with the line off, a change while another holds the world is refused as Felis does', async () => {
  const api = new FakeServerApi();
  api.put(felisServer('survival'));
  const lock = new WorldLock(api, { namespace: 'minecraft', retry: RETRY });
  let release!: () => void;
  const first = lock.run('survival', 'file-write', () => new Promise<void>((r) => (release = r)));
  await sleep(20);
  await assert.rejects(
    lock.run('survival', 'file-write', async () => 'second'),
    MaintenanceBusyError,
  );
  release();
  await first;
});

test('a caller that goes away while waiting leaves the line and its change never runs; Preference-Applied once the wait is over', async () => {
  const { api, lock } = setup();
  let release!: () => void;
  const first = lock.run('survival', 'file-write', () => new Promise<void>((r) => (release = r)));
  await sleep(20);
  const gone = new AbortController();
  let ran = false;
  const second = lock.run('survival', 'file-write', async () => void (ran = true), undefined, undefined, gone.signal);
  await sleep(50);
  assert.equal(parseQueue(api.annotation('survival', QUEUE))!.tickets.length, 2);
  gone.abort(new Error('the caller went away'));
  await assert.rejects(second, /the caller went away/);
  assert.equal(parseQueue(api.annotation('survival', QUEUE))!.tickets.length, 1, 'its ticket went');
  let applied = 0;
  const third = lock.run('survival', 'file-write', async () => 'third', { waitMs: 5000, applied: () => void applied++ });
  release();
  await first;
  assert.equal(await third, 'third');
  assert.equal(applied, 1);
  assert.equal(ran, false);
});

test('the lock a long change reads follows the line as it re-dates it, so a call it sends late still carries a lock that holds', async (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] });
  const api = new FakeServerApi();
  api.put(felisServer('survival'));
  let now = Date.now();
  const lock = new WorldLock(api, { namespace: 'minecraft', retry: RETRY, joinChanges: true, now: () => new Date(now) });
  let release!: () => void;
  const hold = new Promise<void>((r) => (release = r));
  const seen: string[] = [];
  const change = lock.run('survival', 'file-write', async (held) => {
    seen.push(held.value);
    await hold;
    seen.push(held.value);
  });
  for (let i = 0; i < 100 && seen.length === 0; i++) await sleep(5);
  // Forty seconds on, the renewal re-dates the lock Felis sees.
  now += 40_000;
  t.mock.timers.tick(30_000);
  for (let i = 0; i < 100 && api.annotation('survival', LOCK) === seen[0]; i++) await sleep(5);
  await sleep(20);
  release();
  await change;
  assert.notEqual(seen[1], seen[0], 're-dated');
  assert.equal(seen[1], lockValue('file-write', new Date(now)));
});
