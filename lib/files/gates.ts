/**
 * The seam where world maintenance plugs into the file routes, in two plain calls: `enter` (the
 * server exists, is stopped, has a world volume; says where its world lives) and `run` (a
 * mutation under the world lock). The file routes call only this interface;
 * lib/maintenance/file-gates.ts implements it. Nothing here knows of HTTP.
 * @module
 */
import type { Op } from '../job-spec/ops.ts';
import type { Target } from './editor.ts';

/** What a file call is about to do. */
export interface FileAccess {
  op: Op;
  path: string;
}

export interface FileGates {
  /**
   * Throws (404 unknown server, 409 not_stopped, 409 no_world_volume) when the op may not run;
   * otherwise says where the server's world lives.
   */
  enter(server: string, access: FileAccess): Promise<Target>;
  /**
   * Runs a mutation holding the server's world (409 maintenance_in_progress when held), and gives
   * the world back before returning, whatever `fn` did.
   */
  run<T>(server: string, access: FileAccess, fn: () => Promise<T>): Promise<T>;
}
