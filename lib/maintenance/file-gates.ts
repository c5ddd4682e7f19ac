/**
 * The file routes' gates with world maintenance (felis-behaviour §8.2): the server must exist, be
 * stopped (except a system server's live experience file), and have a world volume; mutations are
 * admitted through the WorldLock. Reads and listings take no lock.
 * @module
 */
import type { FileGates, GateRequest, LockKind } from '../files/gates.ts';
import type { Target } from '../files/editor.ts';
import type { ServerApi } from '../kube/servers.ts';
import { NoWorldVolumeError, NotStoppedError, ServerNotFoundError } from './errors.ts';
import { stoppedForEntry, SYSTEM_SERVERS, worldClaim } from './server-state.ts';
import type { WorldLock } from './world-lock.ts';

/** The one file a running login/lobby server may have read and saved (its live settings). */
export const EXPERIENCE_FILE = 'felis-experience.json';

export function isLiveExperienceFile(server: string, req: GateRequest): boolean {
  return SYSTEM_SERVERS.has(server) && req.route === 'file' && (req.method === 'GET' || req.method === 'PUT') && req.path === EXPERIENCE_FILE;
}

export class MaintenanceGates implements FileGates {
  readonly #api: ServerApi;
  readonly #lock: WorldLock;

  constructor(api: ServerApi, lock: WorldLock) {
    this.#api = api;
    this.#lock = lock;
  }

  async enter(name: string, req: GateRequest): Promise<Target> {
    const ns = this.#lock.namespace;
    const server = await this.#api.getServer(ns, name);
    if (!server) throw new ServerNotFoundError(name);
    if (!isLiveExperienceFile(name, req) && !stoppedForEntry(server)) throw new NotStoppedError();
    const claim = worldClaim(server, name);
    if (!(await this.#api.claimExists(ns, claim))) throw new NoWorldVolumeError();
    return { server: name, world: { claim, node: server.spec?.nodeName || undefined } };
  }

  lockKind(name: string, req: GateRequest): LockKind {
    return isLiveExperienceFile(name, req) ? 'config-write' : 'file-write';
  }

  lock(name: string, kind: LockKind) {
    return this.#lock.acquire(name, kind);
  }
}
