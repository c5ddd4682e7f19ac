/**
 * The admission lock and the guarded start, over the MinecraftServer's annotation with optimistic
 * concurrency. Every write that depends on what was read carries the resourceVersion it read, so
 * of an admission and a start racing on one server, the second writer gets a 409, re-reads, and
 * sees the first: never two holders, never a start while held.
 * @module
 */

import { isConflict } from '../kube/errors.ts';
import type { MinecraftServer, ServerApi } from '../kube/servers.ts';
import { ANNOTATION_FILES_QUEUE, ANNOTATION_MAINTENANCE, LABEL_SERVER } from '../labels.ts';
import { sleep } from '../sleep.ts';
import { ArrivalLine, admitWaiting, type Clock, realClock, type WaitOptions } from './admission-wait.ts';
import { DEFAULT_RESTART_ANNOTATION, gamePodSelector } from './contracts.ts';
import { LockFreshError, LockProtectedError, MaintenanceBusyError, NotStoppedError, ServerNotFoundError } from './errors.ts';
import { type HolderKind, type HoldState, holdState, isOurChange, lockHolds, lockValue, parseLock, rfc3339 } from './holder.ts';
import { fullyStopped, SYSTEM_SERVERS } from './server-state.ts';
import { WorldLine } from './world-line.ts';
import { DRAIN_MS } from './world-queue.ts';

/** How long a release may take before we give up on it (the lock then lapses after Grace). */
export const RELEASE_TIMEOUT_MS = 10_000;

export interface WorldLockOptions {
  namespace: string;
  /** The annotation Felis's restart endpoint writes; a pending restart refuses every admission. */
  restartAnnotation?: string;
  now?: () => Date;
  /** client-go DefaultRetry: 5 attempts, 10 ms apart, 10% jitter. */
  retry?: { steps: number; delayMs: number; jitter: number };
  /** Told when a release fails; the lock then lapses by itself after Grace. */
  onReleaseError?: (err: unknown, server: string) => void;
  /** Told when a mutation kept its lock (it lapses after Grace). */
  onLockKept?: (server: string, value: string) => void;
  /** The clock of a caller's wait for the world (tests); the real one by default. */
  waitClock?: Clock;
  /**
   * File changes join the line of felis-world's changes on a held world and run in turn
   * (world-line.ts) instead of being refused while another runs; off keeps Felis's rule (a change
   * while another holds the world is 409). FELIS_JOIN_CHANGES, on by default in the functions.
   */
  joinChanges?: boolean;
}

/**
 * The lock a mutation holds while it runs: its value (as written, or as the line of changes that
 * join has re-dated it since: read it when it is used), and how to leave it to lapse.
 */
export interface HeldValue {
  value: string;
  keep(): void;
}

/** Gives the world back: removes the lock the admission wrote, whose value it carries. */
export type Release = (() => Promise<void>) & { readonly value?: string };

/** What an unlock found and removed. `since` is null for a lock nobody can date. */
export interface Unlocked {
  removed: boolean;
  lock: { kind: string; since: string | null; value: string; fresh: boolean } | null;
}

export class WorldLock {
  readonly #api: ServerApi;
  readonly #ns: string;
  readonly #restartAnnotation: string;
  readonly #now: () => Date;
  readonly #retry: { steps: number; delayMs: number; jitter: number };
  readonly #onReleaseError: (err: unknown, server: string) => void;
  readonly #onLockKept: (server: string, value: string) => void;
  /** This instance's waiters, per server, in arrival order. */
  readonly #line = new ArrivalLine();
  readonly #waitClock: Clock;
  /** The line of changes that join, when on. */
  readonly #joined: WorldLine | undefined;

  constructor(api: ServerApi, opts: WorldLockOptions) {
    this.#api = api;
    this.#ns = opts.namespace;
    this.#restartAnnotation = opts.restartAnnotation ?? DEFAULT_RESTART_ANNOTATION;
    this.#now = opts.now ?? (() => new Date());
    this.#retry = opts.retry ?? { steps: 5, delayMs: 10, jitter: 0.1 };
    this.#onReleaseError = opts.onReleaseError ?? (() => {});
    this.#onLockKept = opts.onLockKept ?? (() => {});
    this.#waitClock = opts.waitClock ?? realClock;
    // A line is contended by design: its writes retry a conflict more often than an admission.
    const lineRetry = { ...this.#retry, steps: Math.max(this.#retry.steps, 40) };
    this.#joined = opts.joinChanges
      ? new WorldLine({
          api,
          namespace: this.#ns,
          restartAnnotation: this.#restartAnnotation,
          now: this.#now,
          clock: this.#waitClock,
          // One try: the line's own retry reads the server anew after a Conflict.
          admit: (name, read, annotations) => this.#admit(name, 'file-write', read, annotations, true).then(() => undefined),
          onConflictRetry: (fn) => this.#onConflictRetry(fn, lineRetry),
          onKept: (server, value) => this.#onLockKept(server, value),
          onLeaveError: (err, server) => this.#onReleaseError(err, server),
        })
      : undefined;
  }

  get namespace(): string {
    return this.#ns;
  }

  /** The server and what holds its world now. */
  async inspect(name: string): Promise<{ server: MinecraftServer; state: HoldState }> {
    const server = await this.#api.getServer(this.#ns, name);
    if (!server) throw new ServerNotFoundError(name);
    const jobs = await this.#api.listJobs(this.#ns, `${LABEL_SERVER}=${name}`);
    return { server, state: holdState(name, server.metadata.annotations, jobs, this.#now()) };
  }

  /**
   * Admits one holder of `kind`: the server must be fully stopped (unless a system server's settings
   * save), no restart pending, no holder. Writes `<kind>@<now>` under the resourceVersion it read.
   * Returns the release.
   */
  async acquire(name: string, kind: HolderKind, read?: MinecraftServer): Promise<Release> {
    // Only the first attempt may judge the caller's read; every retry reads the server anew.
    let first = read;
    const value = await this.#onConflictRetry(() => {
      const r = first;
      first = undefined;
      return this.#admit(name, kind, r);
    });
    return Object.assign(() => this.release(name, value), { value });
  }

  /**
   * One try of an admission (the caller retries a 409 Conflict): judges the server (`read`, or read
   * anew) and writes `<kind>@<now>` with `annotations(lock)` under its resourceVersion. `ours`:
   * felis-world's own background changes are not holders here (a change of the line waits for them
   * in turn).
   */
  async #admit(name: string, kind: HolderKind, read: MinecraftServer | undefined, annotations?: (lock: string) => Record<string, string>, ours = false): Promise<string> {
    // The first attempt may judge the server the caller's entry gate just read: the lock is
    // written under that read's resourceVersion, so a server changed since (a start, another
    // admission) makes the patch a 409, and the retry reads it afresh. Every retry reads.
    const server = read ?? (await this.#api.getServer(this.#ns, name));
    if (!server) throw new ServerNotFoundError(name);
    // The game Pods and the server's Jobs are read at the same time; the refusals keep their
    // order (not stopped, a restart pending, a holder) whichever answers first.
    const checkGame = !(kind === 'config-write' && SYSTEM_SERVERS.has(name));
    const [gamePods, jobs] = await Promise.all([checkGame ? this.#api.listPods(this.#ns, gamePodSelector(name)) : Promise.resolve([]), this.#api.listJobs(this.#ns, `${LABEL_SERVER}=${name}`)]);
    if (checkGame && !fullyStopped(server, gamePods)) throw new NotStoppedError();
    if (server.metadata.annotations?.[this.#restartAnnotation]) throw new MaintenanceBusyError();
    const now = this.#now();
    const held = holdState(name, server.metadata.annotations, jobs, now, ours ? isOurChange : undefined).holder;
    if (held) throw MaintenanceBusyError.heldBy(held, now);
    const v = lockValue(kind, now);
    await this.#api.patchServer(this.#ns, name, {
      metadata: { resourceVersion: server.metadata.resourceVersion, annotations: { [ANNOTATION_MAINTENANCE]: v, ...annotations?.(v) } },
    });
    return v;
  }

  /**
   * Runs `fn` holding the world as `kind`; with `wait`, a world held by another file mutation is
   * waited for (admission-wait.ts) instead of refused. `fn` is given the lock: its value, and
   * `keep()`, for a change that may still be under way somewhere nothing else can see (a session
   * Pod that did not answer): a kept lock is not released but lapses after its grace, so the world
   * stays held for as long as that change can last. Otherwise the release runs on every path
   * (success, error, timeout, a caller who went away) and finishes before this returns, so the
   * caller's next request finds the world free. It is bounded to 10 s and a failure is only
   * reported: a lock lapses by itself.
   */
  async run<T>(name: string, kind: HolderKind, fn: (lock: HeldValue) => Promise<T>, wait?: WaitOptions, read?: MinecraftServer, signal?: AbortSignal): Promise<T> {
    if (this.#joined && kind === 'file-write') {
      const gone = wait?.signal ?? signal;
      return this.#joined.run(name, fn, { ...(wait ? { waitMs: wait.waitMs, applied: wait.applied } : {}), ...(gone ? { signal: gone } : {}), read });
    }
    // Only the first admission may use the caller's read; one after a wait reads the server anew.
    let first = read;
    const acquire = () => {
      const r = first;
      first = undefined;
      return this.acquire(name, kind, r);
    };
    const release = wait ? await admitWaiting(name, acquire, wait, this.#line, this.#waitClock) : await acquire();
    let kept = false;
    try {
      return await fn({ value: release.value ?? '', keep: () => void (kept = true) });
    } finally {
      if (kept) this.#onLockKept(name, release.value ?? '');
      else await bounded(release(), RELEASE_TIMEOUT_MS).catch((err) => this.#onReleaseError(err, name));
      this.#line.nudge(name);
    }
  }

  /**
   * Drops the lock this caller wrote, and only that one: unlike Felis's unconditional delete, a
   * caller whose lock went stale and was taken over cannot remove its successor's. Never touches
   * a `migration@` lock. A missing server counts as released.
   */
  async release(name: string, value: string): Promise<void> {
    if (value.startsWith('migration@')) return;
    // One conditional write, never from the admission's read: the lock may have lapsed and been
    // taken over (or removed by an operator) while the change ran, and only our own value may go;
    // the API server checks the value and removes it in the same write.
    await this.#api.removeAnnotationIf(this.#ns, name, ANNOTATION_MAINTENANCE, value);
  }

  /**
   * The guarded start: refuses while anything holds the world; otherwise sets desiredState Running
   * and drops the (stale) lock in the same write, under the resourceVersion it checked.
   */
  async start(name: string, extraAnnotations: Record<string, string> = {}): Promise<MinecraftServer> {
    // Changes running or waiting in the line finish first; none may join meanwhile (a steady stream
    // of them never keeps a server from starting). Past the drain's time the start is refused.
    if (this.#joined) await this.#joined.drain(name, DRAIN_MS);
    try {
      return await this.#startNow(name, extraAnnotations);
    } finally {
      // A start that went ahead removed the marker with the lock; one refused lifts its drain.
      await this.#joined?.undrain(name).catch(() => {});
    }
  }

  async #startNow(name: string, extraAnnotations: Record<string, string>): Promise<MinecraftServer> {
    return this.#onConflictRetry(async () => {
      const { server, state } = await this.inspect(name);
      if (state.holder) throw MaintenanceBusyError.heldBy(state.holder, this.#now());
      const annotations: Record<string, string | null> = { ...extraAnnotations };
      if (server.metadata.annotations?.[ANNOTATION_MAINTENANCE] !== undefined) annotations[ANNOTATION_MAINTENANCE] = null;
      if (server.metadata.annotations?.[ANNOTATION_FILES_QUEUE] !== undefined) annotations[ANNOTATION_FILES_QUEUE] = null;
      return this.#api.patchServer(this.#ns, name, {
        metadata: { resourceVersion: server.metadata.resourceVersion, ...(Object.keys(annotations).length ? { annotations } : {}) },
        spec: { desiredState: 'Running' },
      });
    });
  }

  /** Stopping is always safe: a plain write with no precondition. */
  async stop(name: string): Promise<MinecraftServer> {
    if (!(await this.#api.getServer(this.#ns, name))) throw new ServerNotFoundError(name);
    return this.#api.patchServer(this.#ns, name, { spec: { desiredState: 'Stopped' } });
  }

  /**
   * An operator removing a stuck lock. Refused while a Job holds the world (that hold ends with the
   * Job), always for a `migration@` lock (Felis is moving the world; only it may remove that), and
   * for a lock younger than Grace unless `force` (its owner may still be between admission and
   * Job). The removal carries the resourceVersion read, so a lock replaced meanwhile is re-judged.
   */
  async unlock(name: string, opts: { force: boolean }): Promise<Unlocked> {
    return this.#onConflictRetry(async () => {
      const { server, state } = await this.inspect(name);
      if (state.holder?.source === 'job') throw MaintenanceBusyError.heldBy(state.holder, this.#now());
      const value = server.metadata.annotations?.[ANNOTATION_MAINTENANCE];
      if (value === undefined) return { removed: false, lock: null };
      // Any `migration@` value, even one nobody can date: removing it could let a write into a world in flight.
      if (value.startsWith('migration@')) throw new LockProtectedError();
      const parsed = parseLock(value);
      const fresh = parsed !== undefined && lockHolds(parsed, this.#now());
      if (fresh && !opts.force) throw new LockFreshError();
      await this.#api.patchServer(this.#ns, name, {
        metadata: { resourceVersion: server.metadata.resourceVersion, annotations: { [ANNOTATION_MAINTENANCE]: null } },
      });
      return { removed: true, lock: { kind: parsed?.kind ?? '', since: parsed ? rfc3339(parsed.at) : null, value, fresh } };
    });
  }

  /** Re-runs `fn` on a 409 Conflict; after the last attempt the race counts as "busy". */
  async #onConflictRetry<T>(fn: () => Promise<T>, retry = this.#retry): Promise<T> {
    const { steps, delayMs, jitter } = retry;
    for (let i = 1; ; i++) {
      try {
        return await fn();
      } catch (err) {
        if (!isConflict(err)) throw err;
        if (i >= steps) throw new MaintenanceBusyError(undefined, undefined, { contended: true });
        await sleep(delayMs * (1 + Math.random() * jitter));
      }
    }
  }
}

function bounded(p: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<void>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`lock release did not finish within ${ms} ms`)), ms);
  });
  return Promise.race([p, limit]).finally(() => clearTimeout(timer));
}
