/**
 * Changes that join: the I/O of the line of felis-world's file changes on a world (world-queue.ts
 * holds its rules). A change takes a ticket in the line on the MinecraftServer, waits for its turn,
 * runs holding Felis's one `file-write@…` lock with every other change of the line, and leaves; the
 * last to leave gives the world back. Every write of the line carries the resourceVersion it read, so
 * two function instances never both think they run, and a start that read the server before a change
 * joined gets a 409 and reads it again (WorldLock.start drains the line first).
 *
 * Its turn comes when its ticket is first and no background change of felis-world's own (an
 * extraction, a copy; they hold the world by their Job) still runs; a pull's download is none of
 * these: it holds nothing (docs/pulls.md). Anything else holding the world
 * (a backup, a restore, Felis's own file Job, a migration, a pending restart, a start waiting) is
 * answered at once with 409 `maintenance_in_progress` and a `Retry-After`.
 * @module
 */
import { randomBytes } from 'node:crypto';
import type { V1Job } from '@kubernetes/client-node';
import type { MinecraftServer, ServerApi } from '../kube/servers.ts';
import { ANNOTATION_FILES_QUEUE, ANNOTATION_MAINTENANCE, LABEL_SERVER } from '../labels.ts';
import type { Clock } from './admission-wait.ts';
import { MaintenanceBusyError, ServerNotFoundError } from './errors.ts';
import { describeHolder, filesActivity, holdState, isOurChange, jobFinished } from './holder.ts';
import { RETRY_FILE_CHANGE_SECONDS } from './retry-after.ts';
import { formatQueue, joinPlan, liveQueue, MAX_WAIT_MS, newTicket, parseQueue, position, RENEW_EVERY_MS, redated, renewed, type WorldQueue, without } from './world-queue.ts';

/** What the lock gives a change while it runs (world-lock.ts HeldValue). */
export interface LineHold {
  /** The lock the line holds the world with: re-dated while the change runs, so read it when it is used. */
  value: string;
  keep(): void;
}

export interface LineOptions {
  api: ServerApi;
  namespace: string;
  /** The annotation Felis's restart endpoint writes: a pending restart refuses every change. */
  restartAnnotation: string;
  now: () => Date;
  clock: Clock;
  /**
   * One try of the full admission of a change when nothing of ours holds the world (WorldLock): the
   * server fully stopped, no restart pending, no holder but our own background changes; writes the
   * lock and `annotations(lock)` under the resourceVersion of `read` (a 409 Conflict is thrown, and
   * retried by the line with a fresh read).
   */
  admit: (name: string, read: MinecraftServer | undefined, annotations: (lock: string) => Record<string, string>) => Promise<void>;
  /** Re-runs a read-and-write on a 409 Conflict (WorldLock's retry, with more steps: a line is contended by design). */
  onConflictRetry: <T>(fn: () => Promise<T>) => Promise<T>;
  /** Told when a change kept its ticket (it lapses after its lease). */
  onKept?: (server: string, value: string) => void;
  /** Told when leaving the line failed (the ticket lapses after its lease). */
  onLeaveError?: (err: unknown, server: string) => void;
}

export interface TurnOptions {
  /** The longest to wait for its turn (at most MAX_WAIT_MS). */
  waitMs?: number;
  signal?: AbortSignal;
  /** The server the caller's entry read: the first join may judge it. */
  read?: MinecraftServer;
  /** Told once when the wait is over: its turn came, or it waited out its bound (`Preference-Applied`). */
  applied?: () => void;
}

/** How long a waiter pauses between looks: short near the front, longer behind many. */
function pause(pos: number, clock: Clock): number {
  const base = Math.min(10 + 10 * pos, 200);
  return base * (0.8 + 0.4 * clock.random());
}

/** A background change of felis-world's own on `name`'s world whose Job has not finished (it holds the world by its Job). */
function ourChangeRunning(name: string, jobs: V1Job[]): V1Job | undefined {
  return jobs.find((j) => j.metadata?.labels?.[LABEL_SERVER] === name && isOurChange(j) && !jobFinished(j));
}

function seconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}

/** A change that waited out its bound for its turn (the 409 a caller gets then). */
export class WaitedOutError extends MaintenanceBusyError {
  constructor(opts: { message: string; retryAfterSeconds: number }) {
    super('file-write', undefined, opts);
    this.name = 'WaitedOutError';
  }
}

export class WorldLine {
  readonly #o: LineOptions;
  /** This instance's waiters per server, woken when one of this instance's changes leaves. */
  readonly #sleepers = new Map<string, Set<() => void>>();

  constructor(o: LineOptions) {
    this.#o = o;
  }

  #ms(): number {
    return this.#o.now().getTime();
  }

  async #server(name: string): Promise<MinecraftServer> {
    const s = await this.#o.api.getServer(this.#o.namespace, name);
    if (!s) throw new ServerNotFoundError(name);
    return s;
  }

  #line(s: MinecraftServer): WorldQueue | undefined {
    const a = s.metadata.annotations;
    return liveQueue(parseQueue(a?.[ANNOTATION_FILES_QUEUE]), a?.[ANNOTATION_MAINTENANCE], this.#ms());
  }

  /** A start's drain, whether or not a line still holds the world (it outlives the line: see #write). */
  #draining(s: MinecraftServer): number | undefined {
    const drain = parseQueue(s.metadata.annotations?.[ANNOTATION_FILES_QUEUE])?.drain;
    return drain !== undefined && drain > this.#ms() ? drain : undefined;
  }

  /**
   * Writes the line (and the lock it names) under the resourceVersion `s` was read at. An empty line
   * gives the world back (the lock goes); while a start drains it, it stays as the drain's marker
   * alone, so no change is admitted between the last one leaving and the start.
   */
  async #write(s: MinecraftServer, q: WorldQueue): Promise<void> {
    const empty = q.tickets.length === 0;
    const annotations = !empty
      ? { [ANNOTATION_FILES_QUEUE]: formatQueue(q), [ANNOTATION_MAINTENANCE]: q.lock }
      : { [ANNOTATION_FILES_QUEUE]: q.drain !== undefined ? formatQueue(q) : null, [ANNOTATION_MAINTENANCE]: null };
    await this.#o.api.patchServer(this.#o.namespace, s.metadata.name, { metadata: { resourceVersion: s.metadata.resourceVersion, annotations } });
  }

  /** Takes a ticket: joins felis-world's line on the world, or is admitted and starts one. */
  async #join(name: string, id: string, read: MinecraftServer | undefined): Promise<void> {
    let known = read;
    await this.#o.onConflictRetry(async () => {
      const s = known ?? (await this.#server(name));
      known = undefined;
      if (s.metadata.annotations?.[this.#o.restartAnnotation]) throw new MaintenanceBusyError();
      const now = this.#ms();
      const drain = this.#draining(s);
      const line = this.#line(s);
      const plan = drain !== undefined && !line ? { kind: 'refuse' as const, why: 'draining' as const, retryAfterMs: drain - now } : joinPlan(line, newTicket(id, now), now);
      if (plan.kind === 'refuse') {
        const message =
          plan.why === 'draining'
            ? 'a start of this server is waiting for its file changes to finish; retry once it has started or given up'
            : "the most file changes that may wait for this server's world are already waiting; retry shortly";
        throw new MaintenanceBusyError('file-write', undefined, { message, retryAfterSeconds: seconds(plan.retryAfterMs) });
      }
      if (plan.kind === 'join') return this.#write(s, plan.queue);
      // Nothing of ours holds the world: the full admission, which starts the line with this ticket.
      return this.#o.admit(name, s, (lock) => ({ [ANNOTATION_FILES_QUEUE]: formatQueue({ lock, tickets: [newTicket(id, now)] }) }));
    });
  }

  /**
   * Waits until `id` runs: first in the line, and no background change of ours still holding the
   * world by its Job. Returns the lock value to run with (re-dated first when old). Refused when
   * the ticket lapsed or the line is gone (someone else holds the world now), or out of time.
   */
  async #turn(name: string, id: string, deadline: number, signal: AbortSignal | undefined): Promise<string> {
    const since = this.#ms();
    for (;;) {
      if (signal?.aborted) throw signal.reason;
      const s = await this.#server(name);
      const q = this.#line(s);
      const pos = q ? position(q, id) : -1;
      if (!q || pos < 0) throw new MaintenanceBusyError(undefined, undefined, { message: "this change's place in line for the server's world lapsed while it waited; retry it", retryAfterSeconds: 1 });
      let waitingFor: string | undefined;
      if (pos === 0) {
        const jobs = await this.#o.api.listJobs(this.#o.namespace, `${LABEL_SERVER}=${name}`);
        // Felis's operator admits nothing while the line's lock holds; a holder Job found here anyway
        // (one created without looking) is not waited out: refused as at an admission.
        const foreign = holdState(name, undefined, jobs, new Date(this.#ms()), isOurChange).holder;
        if (foreign) throw MaintenanceBusyError.heldBy(foreign, new Date(this.#ms()));
        const busy = ourChangeRunning(name, jobs);
        if (!busy) {
          const fresh = redated(q, this.#ms());
          if (fresh.lock === q.lock) return q.lock;
          await this.#o.onConflictRetry(async () => {
            const again = await this.#server(name);
            const line = this.#line(again);
            if (line && position(line, id) === 0) await this.#write(again, redated(line, this.#ms()));
          });
          continue;
        }
        waitingFor = describeHolder('file-write', filesActivity(busy));
      }
      if (this.#ms() >= deadline) {
        const what = waitingFor ?? `${pos} earlier file change${pos === 1 ? '' : 's'}`;
        throw new WaitedOutError({
          message: `this change waited ${Math.max(1, Math.round((this.#ms() - since) / 1000))} s behind ${what} on this server's world; retry once ${pos === 0 ? 'it finishes' : 'they finish'}`,
          retryAfterSeconds: RETRY_FILE_CHANGE_SECONDS,
        });
      }
      await this.#sleep(name, pos === 0 ? 100 : pause(pos, this.#o.clock), signal);
    }
  }

  async #sleep(name: string, ms: number, signal: AbortSignal | undefined): Promise<void> {
    let wake: () => void = () => {};
    const woken = new Promise<void>((resolve) => (wake = resolve));
    let set = this.#sleepers.get(name);
    if (!set) this.#sleepers.set(name, (set = new Set()));
    set.add(wake);
    try {
      await Promise.race([this.#o.clock.sleep(ms, signal), woken]);
    } finally {
      set.delete(wake);
      if (set.size === 0) this.#sleepers.delete(name);
    }
  }

  /** Leaves the line; the last to leave removes the line and the lock. A ticket already gone is left. */
  async #leave(name: string, id: string): Promise<void> {
    await this.#o.onConflictRetry(async () => {
      const s = await this.#o.api.getServer(this.#o.namespace, name);
      if (!s) return;
      const q = this.#line(s);
      if (!q || position(q, id) < 0) return;
      await this.#write(s, redated(without(q, id), this.#ms()));
    });
    for (const wake of this.#sleepers.get(name) ?? []) wake();
  }

  /** Renews `id`'s lease (and the lock's date) while it runs; answers the lock the line now holds the world with. */
  async #renew(name: string, id: string): Promise<string | undefined> {
    return this.#o.onConflictRetry(async () => {
      const s = await this.#server(name);
      const q = this.#line(s);
      if (!q || position(q, id) < 0) return undefined;
      const next = renewed(q, id, this.#ms());
      await this.#write(s, next);
      return next.lock;
    });
  }

  /**
   * Runs `fn` in turn in the world's line. `fn` is given the lock value it runs under, and `keep()`
   * for a change that may still be under way where nothing else can see (an edit session that did
   * not answer): its ticket then stays, and lapses after its lease, so the world stays held as long
   * as such a change can last. Otherwise the ticket goes on every path.
   */
  async run<T>(name: string, fn: (hold: LineHold) => Promise<T>, opts: TurnOptions = {}): Promise<T> {
    const id = randomBytes(8).toString('hex');
    const deadline = this.#ms() + Math.min(opts.waitMs ?? MAX_WAIT_MS, MAX_WAIT_MS);
    await this.#join(name, id, opts.read);
    let lock: string;
    try {
      lock = await this.#turn(name, id, deadline, opts.signal);
      opts.applied?.();
    } catch (err) {
      if (err instanceof WaitedOutError) opts.applied?.();
      await this.#leave(name, id).catch((e) => this.#o.onLeaveError?.(e, name));
      throw err;
    }
    let kept = false;
    // The value follows the line's re-dated lock, so a call sent late in a long change (an upload
    // session's receiver that took a while to start) carries a lock that still holds.
    const hold: LineHold = { value: lock, keep: () => void (kept = true) };
    const renewal = setInterval(
      () =>
        void this.#renew(name, id).then(
          (v) => void (v && (hold.value = v)),
          () => {},
        ),
      RENEW_EVERY_MS,
    );
    renewal.unref?.();
    try {
      return await fn(hold);
    } finally {
      clearInterval(renewal);
      if (kept) this.#o.onKept?.(name, hold.value);
      else await this.#leave(name, id).catch((e) => this.#o.onLeaveError?.(e, name));
    }
  }

  /**
   * For a start: stops new changes from joining (the line's `drain`) and waits until the line is
   * empty and no background change of ours runs, up to `ms`. On time out the drain is lifted and the
   * start refused with a Retry-After.
   */
  async drain(name: string, ms: number, signal?: AbortSignal): Promise<void> {
    const until = this.#ms() + ms;
    for (;;) {
      if (signal?.aborted) throw signal.reason;
      const s = await this.#server(name);
      const q = this.#line(s);
      const jobs = await this.#o.api.listJobs(this.#o.namespace, `${LABEL_SERVER}=${name}`);
      const busy = ourChangeRunning(name, jobs) !== undefined;
      if ((!q || q.tickets.length === 0) && !busy) return;
      if (this.#ms() >= until) {
        await this.#setDrain(name, undefined);
        throw new MaintenanceBusyError('file-write', undefined, {
          message: "file changes still hold this server's world after the start waited for them; retry the start once they finish",
          retryAfterSeconds: RETRY_FILE_CHANGE_SECONDS,
        });
      }
      if (q && q.drain === undefined) await this.#setDrain(name, until);
      await this.#sleep(name, 50, signal);
    }
  }

  /** Lifts a start's drain (the start went ahead or gave up). */
  async undrain(name: string): Promise<void> {
    await this.#setDrain(name, undefined);
  }

  /** Sets or lifts the drain on the line, or on the drain's marker a line left behind. */
  async #setDrain(name: string, until: number | undefined): Promise<void> {
    await this.#o.onConflictRetry(async () => {
      const s = await this.#o.api.getServer(this.#o.namespace, name);
      if (!s) return;
      const live = this.#line(s);
      const q = live ?? parseQueue(s.metadata.annotations?.[ANNOTATION_FILES_QUEUE]);
      if (!q || (until === undefined && q.drain === undefined)) return;
      if (!live && until !== undefined) return; // nothing of ours holds the world: nothing to drain
      const { drain: _d, ...rest } = q;
      const next = until === undefined ? rest : { ...q, drain: until };
      if (live) return this.#write(s, next);
      // Only the marker is left: it goes with the drain.
      await this.#o.api.patchServer(this.#o.namespace, name, { metadata: { resourceVersion: s.metadata.resourceVersion, annotations: { [ANNOTATION_FILES_QUEUE]: null } } });
    });
  }
}
