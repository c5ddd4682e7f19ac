/**
 * The admission lock and the guarded start, over the MinecraftServer's annotation with optimistic
 * concurrency (felis-behaviour §7.5, §7.6, §7.9). Every write that depends on what was read
 * carries the resourceVersion it read, so of an admission and a start racing on one server, the
 * second writer gets a 409, re-reads, and sees the first: never two holders, never a start while
 * held.
 * @module
 */
import { ANNOTATION_MAINTENANCE, LABEL_SERVER } from '../labels.ts';
import { isConflict } from '../kube/errors.ts';
import type { MinecraftServer, ServerApi } from '../kube/servers.ts';
import { MaintenanceBusyError, NotStoppedError, ServerNotFoundError } from './errors.ts';
import { holdState, lockValue, type HoldState, type HolderKind } from './holder.ts';
import { fullyStopped, gamePodSelector, SYSTEM_SERVERS } from './server-state.ts';

export interface WorldLockOptions {
  namespace: string;
  /** The annotation Felis's restart endpoint writes; a pending restart refuses every admission. */
  restartAnnotation?: string;
  now?: () => Date;
  /** client-go DefaultRetry: 5 attempts, 10 ms apart, 10% jitter. */
  retry?: { steps: number; delayMs: number; jitter: number };
}

export type Release = () => Promise<void>;

export class WorldLock {
  readonly #api: ServerApi;
  readonly #ns: string;
  readonly #restartAnnotation: string;
  readonly #now: () => Date;
  readonly #retry: { steps: number; delayMs: number; jitter: number };

  constructor(api: ServerApi, opts: WorldLockOptions) {
    this.#api = api;
    this.#ns = opts.namespace;
    this.#restartAnnotation = opts.restartAnnotation ?? 'felis.lolicon.best/restart-pending';
    this.#now = opts.now ?? (() => new Date());
    this.#retry = opts.retry ?? { steps: 5, delayMs: 10, jitter: 0.1 };
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
  async acquire(name: string, kind: HolderKind): Promise<Release> {
    const value = await this.#onConflictRetry(async () => {
      const server = await this.#api.getServer(this.#ns, name);
      if (!server) throw new ServerNotFoundError(name);
      if (!(kind === 'config-write' && SYSTEM_SERVERS.has(name))) {
        const gamePods = await this.#api.listPods(this.#ns, gamePodSelector(name));
        if (!fullyStopped(server, gamePods)) throw new NotStoppedError();
      }
      if (server.metadata.annotations?.[this.#restartAnnotation]) throw new MaintenanceBusyError();
      const jobs = await this.#api.listJobs(this.#ns, `${LABEL_SERVER}=${name}`);
      const held = holdState(name, server.metadata.annotations, jobs, this.#now()).holder;
      if (held) throw new MaintenanceBusyError(held.kind);
      const v = lockValue(kind, this.#now());
      await this.#api.patchServer(this.#ns, name, {
        metadata: { resourceVersion: server.metadata.resourceVersion, annotations: { [ANNOTATION_MAINTENANCE]: v } },
      });
      return v;
    });
    return () => this.release(name, value);
  }

  /**
   * Drops the lock this caller wrote, and only that one: unlike Felis's unconditional delete, a
   * caller whose lock went stale and was taken over cannot remove its successor's. Never touches
   * a `migration@` lock. A missing server counts as released.
   */
  async release(name: string, value: string): Promise<void> {
    if (value.startsWith('migration@')) return;
    await this.#onConflictRetry(async () => {
      const server = await this.#api.getServer(this.#ns, name);
      if (!server || server.metadata.annotations?.[ANNOTATION_MAINTENANCE] !== value) return;
      await this.#api.patchServer(this.#ns, name, {
        metadata: { resourceVersion: server.metadata.resourceVersion, annotations: { [ANNOTATION_MAINTENANCE]: null } },
      });
    });
  }

  /**
   * The guarded start: refuses while anything holds the world; otherwise sets desiredState Running
   * and drops the (stale) lock in the same write, under the resourceVersion it checked.
   */
  async start(name: string, extraAnnotations: Record<string, string> = {}): Promise<MinecraftServer> {
    return this.#onConflictRetry(async () => {
      const { server, state } = await this.inspect(name);
      if (state.holder) throw new MaintenanceBusyError(state.holder.kind);
      const annotations: Record<string, string | null> = { ...extraAnnotations };
      if (server.metadata.annotations?.[ANNOTATION_MAINTENANCE] !== undefined) annotations[ANNOTATION_MAINTENANCE] = null;
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

  /** An operator clearing a stuck lock: refused while a Job holds the world. Returns the value removed. */
  async clearLock(name: string): Promise<string | undefined> {
    return this.#onConflictRetry(async () => {
      const { server, state } = await this.inspect(name);
      if (state.holder?.source === 'job') throw new MaintenanceBusyError(state.holder.kind);
      const value = server.metadata.annotations?.[ANNOTATION_MAINTENANCE];
      if (value === undefined) return undefined;
      await this.#api.patchServer(this.#ns, name, {
        metadata: { resourceVersion: server.metadata.resourceVersion, annotations: { [ANNOTATION_MAINTENANCE]: null } },
      });
      return value;
    });
  }

  /** Re-runs `fn` on a 409 Conflict; after the last attempt the race counts as "busy". */
  async #onConflictRetry<T>(fn: () => Promise<T>): Promise<T> {
    const { steps, delayMs, jitter } = this.#retry;
    for (let i = 1; ; i++) {
      try {
        return await fn();
      } catch (err) {
        if (!isConflict(err)) throw err;
        if (i >= steps) throw new MaintenanceBusyError();
        await new Promise((r) => setTimeout(r, delayMs * (1 + Math.random() * jitter)));
      }
    }
  }
}
