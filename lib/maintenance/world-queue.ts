/**
 * The line of felis-world's file changes on one world: while felis-world holds a world for file
 * changes, further changes from any caller and any function instance join that hold and run one
 * after the other in arrival order, instead of being refused (docs/world-maintenance.md, "Changes
 * that join"). Pure: the state, its rules and its wire form; lib/maintenance/world-lock.ts reads and
 * writes it.
 *
 * The line lives on the MinecraftServer, beside Felis's lock, in the annotation
 * `felis.lolicon.best/files-queue`: `{"v":1,"lock":"file-write@…","tickets":[{id,at,exp}…],"drain"?}`.
 * - `lock` is the value of Felis's lock annotation this line holds the world with. Felis sees one
 *   `file-write@<time>` lock, as from any file change; the line re-dates it while it lives so it
 *   stays fresh. A line whose lock is no longer the annotation's (an operator removed it, it lapsed
 *   and another holder took the world) holds nothing and is ignored.
 * - `tickets` in arrival order: the first runs, the others wait. A ticket whose holder stops
 *   renewing it lapses after its lease, exactly as a lock lapses after its grace, so a function that
 *   died never blocks the world for longer than a lock it had written would.
 * - `drain`: a start is waiting for the line to empty (until that time): no new change joins.
 *
 * Everything read back is validated; anything else is no line.
 * @module
 */
import { GRACE_MS, lockValue, parseLock } from '../protocol/lock-value.ts';

/** Changes that may wait behind the one running. */
export const MAX_WAITING = 64;
/** How long a change waits for its turn before it is refused (as long as `Prefer: wait` may ask). */
export const MAX_WAIT_MS = 30_000;
/** A ticket nobody renews lapses after this: the grace of Felis's lock. */
export const TICKET_LEASE_MS = GRACE_MS;
/** The running change renews its ticket (and the lock's date) this often. */
export const RENEW_EVERY_MS = 30_000;
/** A lock older than this is re-dated by the next write of the line, so Felis always sees it fresh. */
export const REDATE_AFTER_MS = 30_000;
/** How long a start may wait for the line to empty. */
export const DRAIN_MS = 30_000;

export interface Ticket {
  /** Random, 16 hex digits. */
  id: string;
  /** When it joined (Unix ms). */
  at: number;
  /** When it lapses unless renewed (Unix ms). */
  exp: number;
}

export interface WorldQueue {
  lock: string;
  tickets: Ticket[];
  /** A start waits for the line to empty, until this time (Unix ms): nothing joins meanwhile. */
  drain?: number;
}

const ID = /^[0-9a-f]{16}$/;
const MAX_TEXT = 16 << 10;

function validTicket(t: unknown): t is Ticket {
  const x = t as Ticket;
  return typeof x === 'object' && x !== null && typeof x.id === 'string' && ID.test(x.id) && Number.isSafeInteger(x.at) && Number.isSafeInteger(x.exp);
}

/** The line an annotation holds, or undefined for none (absent, or anything not exactly ours). */
export function parseQueue(text: string | undefined): WorldQueue | undefined {
  if (text === undefined || text.length > MAX_TEXT) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  const q = v as WorldQueue & { v: number };
  if (typeof q !== 'object' || q === null || q.v !== 1 || typeof q.lock !== 'string' || !parseLock(q.lock)) return undefined;
  if (!Array.isArray(q.tickets) || q.tickets.length > MAX_WAITING + 1 || !q.tickets.every(validTicket)) return undefined;
  if (q.drain !== undefined && !Number.isSafeInteger(q.drain)) return undefined;
  return { lock: q.lock, tickets: q.tickets.map((t) => ({ id: t.id, at: t.at, exp: t.exp })), ...(q.drain !== undefined ? { drain: q.drain } : {}) };
}

export function formatQueue(q: WorldQueue): string {
  return JSON.stringify({ v: 1, lock: q.lock, tickets: q.tickets, ...(q.drain !== undefined ? { drain: q.drain } : {}) });
}

/**
 * The line as it stands at `now`, given the lock annotation's value: undefined when it holds
 * nothing (no line, its lock is not the annotation's, not a file-write lock, or lapsed);
 * otherwise without the tickets past their lease and a drain past its time. An empty line still
 * names its lock (the caller gives the world back).
 */
export function liveQueue(q: WorldQueue | undefined, lockNow: string | undefined, now: number): WorldQueue | undefined {
  const lock = q ? parseLock(q.lock) : undefined;
  // A line whose lock lapsed (nobody re-dated it for a grace) died with its changes.
  if (!q || !lock || lockNow !== q.lock || lock.kind !== 'file-write' || Math.abs(now - lock.at.getTime()) >= GRACE_MS) return undefined;
  const tickets = q.tickets.filter((t) => t.exp > now);
  return { lock: q.lock, tickets, ...(q.drain !== undefined && q.drain > now ? { drain: q.drain } : {}) };
}

/** The line with its lock re-dated when it is old (so Felis keeps seeing a fresh lock). */
export function redated(q: WorldQueue, now: number): WorldQueue {
  const at = parseLock(q.lock)?.at.getTime() ?? 0;
  return now - at < REDATE_AFTER_MS ? q : { ...q, lock: lockValue('file-write', new Date(now)) };
}

/** What a change that wants to join finds. */
export type JoinPlan =
  /** felis-world's line holds the world: append to it (the annotations to write). */
  | { kind: 'join'; queue: WorldQueue }
  /** Nothing of ours holds the world: a full admission, which starts a new line. */
  | { kind: 'admit' }
  /** Our line holds the world but takes no more: a start is waiting, or the line is full. */
  | { kind: 'refuse'; why: 'draining' | 'full'; retryAfterMs: number };

export function joinPlan(live: WorldQueue | undefined, ticket: Ticket, now: number): JoinPlan {
  if (!live) return { kind: 'admit' };
  if (live.drain !== undefined) return { kind: 'refuse', why: 'draining', retryAfterMs: Math.max(1000, live.drain - now) };
  if (live.tickets.length > MAX_WAITING) return { kind: 'refuse', why: 'full', retryAfterMs: FULL_RETRY_MS };
  // An empty live line (its last change just left, the lock not yet removed) is joined like any.
  return { kind: 'join', queue: redated({ ...live, tickets: [...live.tickets, ticket] }, now) };
}

/** The line without `id` (a change that is done, or gave up waiting). */
export function without(q: WorldQueue, id: string): WorldQueue {
  return { ...q, tickets: q.tickets.filter((t) => t.id !== id) };
}

/** The line with `id`'s lease renewed (and the lock re-dated when old). */
export function renewed(q: WorldQueue, id: string, now: number): WorldQueue {
  return redated({ ...q, tickets: q.tickets.map((t) => (t.id === id ? { ...t, exp: now + TICKET_LEASE_MS } : t)) }, now);
}

/** Where `id` stands: 0 runs, n waits behind n changes; -1 when it is not in the line (lapsed). */
export function position(q: WorldQueue, id: string): number {
  return q.tickets.findIndex((t) => t.id === id);
}

/** When a change refused by a full line may try again. */
export const FULL_RETRY_MS = 5000;

/** A new ticket joining at `now`. */
export function newTicket(id: string, now: number): Ticket {
  return { id, at: now, exp: now + TICKET_LEASE_MS };
}
