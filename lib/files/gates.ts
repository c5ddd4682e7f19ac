/**
 * The seam where world maintenance plugs into the file routes, in two plain calls: `enter` (the
 * server exists, is stopped or the call only reads, has a world volume; says where its world
 * lives and whether the game may be saving it) and `run` (a mutation under the world lock). The file routes call only this interface;
 * lib/maintenance/file-gates.ts implements it. Nothing here knows of HTTP.
 * @module
 */

import type { Target } from '../job-spec/types.ts';
import type { Op } from '../protocol/ops.ts';

/** What a file call is about to do. */
export interface FileAccess {
  op: Op;
  path: string;
}

export interface FileGates {
  /**
   * Throws (404 unknown server, 409 not_stopped, 409 no_world_volume, 409 volume_exclusive) when
   * the op may not run; otherwise says where the server's world lives, and its `worldState`.
   */
  enter(server: string, access: FileAccess): Promise<Target>;
  /**
   * Runs a mutation holding the server's world (409 maintenance_in_progress when held), and gives
   * the world back before returning, whatever `fn` did. With `opts.waitMs`, a world held by
   * another file mutation is waited for, up to that long, instead of refused.
   */
  run<T>(server: string, access: FileAccess, fn: () => Promise<T>, opts?: RunOptions): Promise<T>;
}

/** How a mutation that may wait for the world (the caller asked to) waits. */
export interface RunOptions {
  /** Wait up to this long for another file mutation to let go of the world; none when absent or 0. */
  waitMs?: number;
  /** The caller went away: stop waiting. */
  signal?: AbortSignal;
  /** Told once when the wait was honoured (admitted, or out of time after waiting). */
  applied?: () => void;
  /** What `enter` answered for this call: the gates may admit from what they read for it. */
  entered?: Target;
}
