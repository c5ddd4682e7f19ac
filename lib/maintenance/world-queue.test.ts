import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GRACE_MS, lockValue } from '../protocol/lock-value.ts';
import { formatQueue, joinPlan, liveQueue, MAX_WAITING, newTicket, parseQueue, position, REDATE_AFTER_MS, renewed, TICKET_LEASE_MS, type WorldQueue, without } from './world-queue.ts';

const T0 = Date.parse('2026-12-07T12:00:00Z');
const LOCK = lockValue('file-write', new Date(T0));
const id = (n: number) => n.toString(16).padStart(16, '0');
const line = (n: number, extra: Partial<WorldQueue> = {}): WorldQueue => ({ lock: LOCK, tickets: Array.from({ length: n }, (_, i) => newTicket(id(i + 1), T0)), ...extra });

test('the line round-trips its wire form; anything not exactly ours is no line', () => {
  const q = line(3, { drain: T0 + 5000 });
  assert.deepEqual(parseQueue(formatQueue(q)), q);
  for (const bad of [
    undefined,
    '',
    'x',
    '{}',
    '{"v":2,"lock":"file-write@2026-12-07T12:00:00Z","tickets":[]}',
    JSON.stringify({ v: 1, lock: 'nope', tickets: [] }),
    JSON.stringify({ v: 1, lock: LOCK, tickets: [{ id: 'zz', at: 1, exp: 2 }] }),
    JSON.stringify({ v: 1, lock: LOCK, tickets: line(MAX_WAITING + 2).tickets }),
    JSON.stringify({ v: 1, lock: LOCK, tickets: [], drain: 'soon' }),
    'x'.repeat(20_000),
  ]) {
    assert.equal(parseQueue(bad), undefined, String(bad).slice(0, 60));
  }
});

test('a live line: its lock is the annotation, a fresh file-write lock; lapsed tickets and an old drain are gone', () => {
  const q = { ...line(2), tickets: [newTicket(id(1), T0 - TICKET_LEASE_MS - 1), newTicket(id(2), T0)], drain: T0 - 1 };
  const live = liveQueue(q, LOCK, T0)!;
  assert.deepEqual(
    live.tickets.map((t) => t.id),
    [id(2)],
  );
  assert.equal(live.drain, undefined);
  assert.equal(liveQueue(q, lockValue('backup', new Date(T0)), T0), undefined, 'another lock: the line holds nothing');
  assert.equal(liveQueue(q, undefined, T0), undefined);
  assert.equal(liveQueue(q, LOCK, T0 + GRACE_MS), undefined, 'a lock nobody re-dated for a grace lapsed');
  const config = { ...q, lock: lockValue('config-write', new Date(T0)) };
  assert.equal(liveQueue(config, config.lock, T0), undefined, 'only a file-write lock is a line');
});

test('joining: no line is a full admission; a line takes a ticket at its end, re-dating an old lock; a drain or a full line refuses', () => {
  const t = newTicket(id(99), T0);
  assert.deepEqual(joinPlan(undefined, t, T0), { kind: 'admit' });
  const joined = joinPlan(line(2), t, T0);
  assert.equal(joined.kind, 'join');
  assert.deepEqual(
    (joined as { queue: WorldQueue }).queue.tickets.map((x) => x.id),
    [id(1), id(2), id(99)],
  );
  assert.equal((joined as { queue: WorldQueue }).queue.lock, LOCK, 'a fresh lock keeps its date');
  const later = T0 + REDATE_AFTER_MS + 1000;
  assert.equal((joinPlan(line(1), newTicket(id(99), later), later) as { queue: WorldQueue }).queue.lock, lockValue('file-write', new Date(later)));
  assert.deepEqual(joinPlan(line(1, { drain: T0 + 4000 }), t, T0), { kind: 'refuse', why: 'draining', retryAfterMs: 4000 });
  assert.equal(joinPlan(line(MAX_WAITING), t, T0).kind, 'join', '64 waiting behind the one running is the most');
  assert.equal(joinPlan(line(MAX_WAITING + 1), t, T0).kind, 'refuse');
});

test('leaving, renewing and where a ticket stands', () => {
  const q = line(3);
  assert.deepEqual(
    without(q, id(2)).tickets.map((t) => t.id),
    [id(1), id(3)],
  );
  assert.equal(position(q, id(3)), 2);
  assert.equal(position(q, id(9)), -1);
  const r = renewed(q, id(1), T0 + 10_000);
  assert.equal(r.tickets[0]!.exp, T0 + 10_000 + TICKET_LEASE_MS);
  assert.equal(r.tickets[1]!.exp, q.tickets[1]!.exp);
});
