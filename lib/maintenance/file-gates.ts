/**
 * The file routes' gates with world maintenance: the server must exist, be stopped (except for
 * reads, which may run beside the game (running-reads.ts), and a system server's live experience
 * file), and have a world volume; mutations run under the WorldLock. Reads and listings take no lock.
 * @module
 */
import type { FileAccess, FileGates, RunOptions } from '../files/gates.ts';
import { withHeldLock } from '../files/held-lock.ts';
import type { Target } from '../job-spec/types.ts';
import type { MinecraftServer, ServerApi } from '../kube/servers.ts';
import { executionNode, worldClaim } from './contracts.ts';
import { NotStoppedError, NoWorldVolumeError, ServerNotFoundError, VolumeExclusiveError } from './errors.ts';
import { exclusiveClaim, readsBesideGame, worldStateOf } from './running-reads.ts';
import { SYSTEM_SERVERS, stoppedForEntry } from './server-state.ts';
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

export interface GateOptions {
  /** Where a Job runs when the server names no node (FELIS_CONTROLLER_NODE). */
  controllerNode?: string;
  /** Reads let in beside a running game (FELIS_READ_WHILE_RUNNING, on by default). */
  readWhileRunning?: boolean;
}

export class MaintenanceGates implements FileGates {
  readonly #api: ServerApi;
  readonly #lock: WorldLock;
  readonly #controllerNode: string | undefined;
  readonly #readWhileRunning: boolean;
  /** The server each entry read, by the Target it answered, for the admission of the same call. */
  readonly #read = new WeakMap<Target, MinecraftServer>();

  constructor(api: ServerApi, lock: WorldLock, opts: GateOptions = {}) {
    this.#api = api;
    this.#lock = lock;
    this.#controllerNode = opts.controllerNode;
    this.#readWhileRunning = opts.readWhileRunning ?? true;
  }

  /**
   * The server and its world claim are read at the same time: the claim is almost always Felis's
   * default name, so it is asked for alongside the server and asked again only when the server
   * names another one. The refusals still come in their order (unknown server, then running, then
   * no volume, then a claim the running game has to itself), whichever read answers first.
   */
  async enter(name: string, access: FileAccess): Promise<Target> {
    const ns = this.#lock.namespace;
    const guess = worldClaim(undefined, name);
    const guessed = settle(this.#api.getClaim(ns, guess));
    const server = await this.#api.getServer(ns, name);
    if (!server) throw new ServerNotFoundError(name);
    const stopped = stoppedForEntry(server);
    const besideGame = !stopped && this.#readWhileRunning && readsBesideGame(access.op);
    if (!stopped && !besideGame && !isLiveExperienceFile(name, access)) throw new NotStoppedError();
    const claim = worldClaim(server, name);
    const found = claim === guess ? unsettle(await guessed) : await this.#api.getClaim(ns, claim);
    if (!found) throw new NoWorldVolumeError();
    // No read Job could mount a claim the game's Pod has to itself: it would wait, never start.
    if (besideGame && exclusiveClaim(found.accessModes)) throw new VolumeExclusiveError(claim);
    const target: Target = { server: name, world: { claim, node: executionNode(server, this.#controllerNode) }, worldState: worldStateOf(server) };
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
    // The mutation runs knowing the lock it holds: an edit session's call carries it (held-lock.ts),
    // as it is when the call is sent (a long change's line re-dates it).
    return this.#lock.run(
      name,
      kind,
      (lock) =>
        withHeldLock(
          {
            server: name,
            kind,
            get value() {
              return lock.value;
            },
            keep: lock.keep,
          },
          fn,
        ),
      wait,
      read,
      opts?.signal,
    );
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
