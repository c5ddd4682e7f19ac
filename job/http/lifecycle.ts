/**
 * How every serving mode of the Job program ends: after `idleMs` with nothing in hand, at
 * `lifetimeMs` whatever happens, or when told (a signal, or the mode's own reason: a download
 * served, an upload placed). Stopping closes the listener, lets keep-alive connections between
 * requests go at once, and cuts whatever is still open after `graceMs`, so no request is kept
 * past the stop for longer than that.
 * @module
 */
import type http from 'node:http';

/** The stops every serving mode shares. */
export type StopReason = 'idle' | 'lifetime' | 'signal';

export interface LifecycleOptions<R extends string> {
  idleMs: number;
  /** None when absent: the mode ends by itself (its Job's deadline bounds it). */
  lifetimeMs?: number;
  /** How long a connection still open at the stop may go on. */
  graceMs: number;
  /** Runs once as the stop begins, before the listener closes. */
  onStop?: (reason: StopReason | R) => void;
  /** Runs once the listener has closed and every connection is gone. */
  onStopped: (reason: StopReason | R) => void;
}

export class Lifecycle<R extends string = never> {
  readonly #server: http.Server;
  readonly #o: LifecycleOptions<R>;
  #stopping: StopReason | R | undefined;
  #idle: NodeJS.Timeout | undefined;
  readonly #lifetime: NodeJS.Timeout | undefined;

  /** The lifetime clock starts now; the idle clock with the first `armIdle`. */
  constructor(server: http.Server, o: LifecycleOptions<R>) {
    this.#server = server;
    this.#o = o;
    this.#lifetime = o.lifetimeMs === undefined ? undefined : setTimeout(() => this.stop('lifetime'), o.lifetimeMs);
  }

  /** Why it is stopping, once it is. */
  get stopping(): StopReason | R | undefined {
    return this.#stopping;
  }

  /** Nothing is in hand: stop if nothing comes within the idle period (or the `ms` left of it). */
  armIdle(ms = this.#o.idleMs): void {
    if (this.#stopping) return;
    if (this.#idle) clearTimeout(this.#idle);
    this.#idle = setTimeout(() => this.stop('idle'), Math.max(0, ms));
  }

  /** Something is in hand: no idle stop until the next `armIdle`. */
  holdIdle(): void {
    if (this.#idle) clearTimeout(this.#idle);
    this.#idle = undefined;
  }

  stop(reason: StopReason | R = 'signal'): void {
    if (this.#stopping) return;
    this.#stopping = reason;
    this.holdIdle();
    if (this.#lifetime) clearTimeout(this.#lifetime);
    this.#o.onStop?.(reason);
    this.#server.close(() => this.#o.onStopped(reason));
    this.#server.closeIdleConnections();
    setTimeout(() => this.#server.closeAllConnections(), this.#o.graceMs).unref();
  }
}
