/**
 * The one rule for a path a caller sends (a `?path=`, a body field, an item of many), for the
 * functions and the Job program alike (pure).
 *
 * A path is relative to the world folder, and a leading `/` means that folder too: panels shaped
 * like Wings send `/world/level.dat` for `world/level.dat` and `/` for the root, so every leading
 * `/` is dropped (`/` and `` are the root). Then the refusals, each in one wording that names what
 * the caller sent (`"/../x": the path leads out of the world`): a `..` that climbs above the root,
 * the limits of ./names.ts (NUL, 4096 bytes, a 255-byte name) and, for a path the call creates,
 * the name rule's characters. A `..` inside the world (`a/../b`) and links are the Job's to walk.
 * @module
 */
import { newPathFault, pathLimitFault, shownName } from './names.ts';

/** A message shows at most this many characters of a path (a 4096-byte path is not worth repeating). */
const SHOWN_MAX = 200;

/** How a refused path is named in a message: quoted, controls made visible, a long one cut. */
export function quotedPath(sent: string): string {
  const shown = shownName(sent);
  return JSON.stringify(shown.length > SHOWN_MAX ? `${shown.slice(0, SHOWN_MAX)}…` : shown);
}

/** The one `bad_path` wording: `"<what the caller sent>": the path <why>`. */
export function pathRefusal(sent: string, why: string): string {
  return `${quotedPath(sent)}: the path ${why}`;
}

/** Why a path leads out of the world (a `..` above the root, or a link whose target does). */
export const LEADS_OUT = 'leads out of the world';
/** Why the root is refused where an op needs a file or folder inside it. */
export const IS_ROOT = 'names the world folder itself; name a file or folder inside it';

/** The path as the Job takes it (no leading `/`; `` is the root), or why it is refused. */
export type WorldPath = { path: string; refusal?: undefined } | { path?: undefined; refusal: string };

/**
 * The rule: leading `/`s dropped, then refused when a `..` climbs above the root or the path
 * breaks a limit (for a path the call `created`, also the name rule's characters).
 */
export function worldPath(sent: string, created = false): WorldPath {
  const path = sent.replace(/^\/+/, '');
  if (climbsOut(path)) return { refusal: pathRefusal(sent, LEADS_OUT) };
  const fault = created ? newPathFault(path) : pathLimitFault(path);
  if (fault) return { refusal: pathRefusal(sent, fault) };
  return { path };
}

/** True when the names of `path`, read in order, climb above where it starts (`..`, `a/../..`). */
export function climbsOut(path: string): boolean {
  let depth = 0;
  for (const seg of path.split('/')) {
    if (seg === '' || seg === '.') continue;
    depth += seg === '..' ? -1 : 1;
    if (depth < 0) return true;
  }
  return false;
}

/** True for a path (as worldPath gives it) that names the root: nothing but `.`s and slashes. */
export function isRootPath(path: string): boolean {
  return path.split('/').every((seg) => seg === '' || seg === '.');
}
