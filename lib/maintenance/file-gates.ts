/**
 * The file routes' gates with world maintenance: the server must exist, be stopped (except a
 * system server's live experience file), and have a world volume; mutations run under the
 * WorldLock. Reads and listings take no lock.
 * @module
 */
import type { FileAccess, FileGates, RunOptions } from '../files/gates.ts';
import { withHeldLock } from '../files/held-lock.ts';
import type { Target } from '../job-spec/types.ts';
import type { MinecraftServer, ServerApi } from '../kube/servers.ts';
import { executionNode, worldClaim } from './contracts.ts';
import { NoWorldVolumeError, NotStoppedError, ServerNotFoundError } from './errors.ts';
import { stoppedForEntry, SYSTEM_SERVERS } from './server-state.ts';
import type { WorldLock } from './world-lock.ts';

/** The one file a running login/lobby server may have read and saved (its live settings). */
export const EXPERIENCE_FILE = 'felis-experience.json';

/** Reading or writing exactly `felis-experience.json` (not `./felis-experience.json`) of a system server. */
export function isLiveExperienceFile(server: string, access: FileAccess): boolean {
  return SYSTEM_SERVERS.has(server) && (access.op === 'read' || access.op === 'write') && access.path === EXPERIENCE_FILE;
}

/** A settings save on a running system server locks as config-write; every other mutation as file-write. */
export function lockKindFor(server: string, access: FileAccess): 'file-write' | 'config-write' {
  return isLiveExperienceFile(server, access) ? 'config-write' : 'file-write';
}

export class MaintenanceGates implements FileGates {
  readonly #api: ServerApi;
  readonly #lock: WorldLock;
  readonly #controllerNode: string | undefined;
  /** The server each entry read, by the Target it answered, for the admission of the same call. */
  readonly #read = new WeakMap<Target, MinecraftServer>();

  constructor(api: ServerApi, lock: WorldLock, opts: { controllerNode?: string } = {}) {
    this.#api = api;
    this.#lock = lock;
    this.#controllerNode = opts.controllerNode;
  }

  /**
   * The server and its world claim are read at the same time: the claim is almost always Felis's
   * default name, so it is asked for alongside the server and asked again only when the server
   * names another one. The refusals still come in their order (unknown server, then running, then
   * no volume), whichever read answers first.
   */
  async enter(name: string, access: FileAccess): Promise<Target> {
    const ns = this.#lock.namespace;
    const guess = worldClaim(undefined, name);
    const guessed = settle(this.#api.claimExists(ns, guess));
    const server = await this.#api.getServer(ns, name);
    if (!server) throw new ServerNotFoundError(name);
    if (!isLiveExperienceFile(name, access) && !stoppedForEntry(server)) throw new NotStoppedError();
    const claim = worldClaim(server, name);
    const exists = claim === guess ? unsettle(await guessed) : await this.#api.claimExists(ns, claim);
    if (!exists) throw new NoWorldVolumeError();
    const target = { server: name, world: { claim, node: executionNode(server, this.#controllerNode) } };
    this.#read.set(target, server);
    return target;
  }

  /**
   * A mutation of a call that entered through `enter` is admitted from the server that entry read
   * (one read of the MinecraftServer for the gates and the admission; see WorldLock.acquire).
   */
  run<T>(name: string, access: FileAccess, fn: () => Promise<T>, opts?: RunOptions): Promise<T> {
    const read = opts?.entered ? this.#read.get(opts.entered) : undefined;
    const wait = opts?.waitMs ? { waitMs: opts.waitMs, signal: opts.signal, applied: opts.applied } : undefined;
    const kind = lockKindFor(name, access);
    // The mutation runs knowing the lock it holds: an edit session's call carries it (held-lock.ts).
    return this.#lock.run(name, kind, (lock) => withHeldLock({ server: name, kind, value: lock.value, keep: lock.keep }, fn), wait, read);
  }
}

type Settled<T> = { ok: true; value: T } | { ok: false; err: unknown };

/** A promise that never rejects, so one left unread (an earlier refusal) is no unhandled rejection. */
function settle<T>(p: Promise<T>): Promise<Settled<T>> {
  return p.then(
    (value) => ({ ok: true, value }),
    (err: unknown) => ({ ok: false, err }),
  );
}

function unsettle<T>(s: Settled<T>): T {
  if (!s.ok) throw s.err;
  return s.value;
}
