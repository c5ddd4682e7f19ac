/**
 * The seam where world maintenance plugs into the file routes: an entry gate (the server exists,
 * is stopped, has a world volume) and the admission lock around a mutation. The file routes call
 * only this interface; lib/maintenance/file-gates.ts implements it.
 * @module
 */
import type { Target } from './editor.ts';

export type LockKind = 'file-write' | 'config-write';

export interface GateRequest {
  /** Which file route: `file` (read, write, delete) or a listing/mkdir/rename route. */
  route: 'file' | 'files' | 'files/mkdir' | 'files/rename';
  method: string;
  path: string;
}

export type Release = () => Promise<void>;

export interface FileGates {
  /**
   * Throws (404 unknown server, 409 not_stopped, 409 no_world_volume) when the op may not run;
   * otherwise says where the server's world lives.
   */
  enter(server: string, req: GateRequest): Promise<Target>;
  /** Takes the world for a mutation (409 maintenance_in_progress when held) and returns the release. */
  lock(server: string, kind: LockKind): Promise<Release>;
  /** The lock kind a mutation takes (config-write for a system server's live experience file). */
  lockKind(server: string, req: GateRequest): LockKind;
}

/** How long a release may take before we give up on it (the lock then lapses after Grace). */
export const RELEASE_TIMEOUT_MS = 10_000;

/**
 * Runs a mutation under the world lock. The release runs on every path — success, error, timeout,
 * a caller who went away — and finishes before the answer, so a caller's next request finds the
 * world free. It is not tied to the request's signal (a caller who disconnects does not cancel
 * it), is bounded to 10 s, and a failure only logs: a lock lapses by itself after Grace.
 */
export async function underLock<T>(
  gates: FileGates,
  server: string,
  req: GateRequest,
  fn: () => Promise<T>,
  onReleaseError: (err: unknown) => void,
): Promise<T> {
  const release = await gates.lock(server, gates.lockKind(server, req));
  try {
    return await fn();
  } finally {
    await bounded(release(), RELEASE_TIMEOUT_MS).catch(onReleaseError);
  }
}

function bounded(p: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<void>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`lock release did not finish within ${ms} ms`)), ms);
  });
  return Promise.race([p, limit]).finally(() => clearTimeout(timer));
}
