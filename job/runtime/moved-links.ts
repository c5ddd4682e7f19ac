/**
 * The rule for moving links: a move (rename, move-many) or a restore from the trash never takes a
 * relative link further above the world's root than it reaches where it is. The game server and
 * its plugins follow links with the kernel, not through the root's containment, so a link moved
 * into a shallower folder could lead out of the volume (`plugins/links/s -> ../../config/x` moved
 * to the root names `../../config/x`, two folders above the world).
 *
 * Judged lexically (link-reach.ts, the copy's rule too) from the folders as the kernel names them
 * (no links: `to` may pass through one), before anything moves. Whether a relative link climbs
 * out depends only on how deep its folder is, so a move into a folder as deep or deeper cannot
 * take any link further out, and is not walked at all (every rename in place). A move into a
 * shallower folder is refused with `bad_path` when the moved entry is, or holds at any depth, a
 * relative link that would lead above the root from its new place; absolute links are left as
 * they are (no move changes where they lead, and every op takes them as leading out already).
 *
 * The walk is bounded: one open folder per level, nothing kept of a folder once read, at most
 * MAX_DEPTH levels, and LINK_CHECK_BUDGET_MS for every entry one op moves. A tree deeper than that,
 * or not walked within the budget, is refused with `too_large` rather than moved unchecked.
 *
 * @module
 */
import fs from 'node:fs';
import type { Result } from '../../lib/protocol/result.ts';
import { canonicalRel } from '../journal/journal.ts';
import { fail, failure } from '../volume/failure.ts';
import { climbsOut } from '../volume/link-reach.ts';
import { dir } from '../volume/pathutil.ts';
import { atPath, errCode, fdPath, type WorldRoot } from '../volume/root.ts';

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW } = fs.constants;

/** How long one op may spend walking what it moves for links (the caller waits meanwhile). */
export const LINK_CHECK_BUDGET_MS = 5_000;
/** Folder levels below a moved entry that are walked; a deeper tree is refused, as count.ts bounds its stack. */
export const MAX_DEPTH = 512;
/** Entries between two looks at the clock. */
const CLOCK_EVERY = 256;

/** The time one op's link checks share: every move of a batch draws on the same budget. */
export class LinkBudget {
  readonly ms: number;
  readonly #deadline: number;
  readonly #now: () => number;
  #seen = 0;
  constructor(ms = LINK_CHECK_BUDGET_MS, now: () => number = () => performance.now()) {
    this.ms = ms;
    this.#now = now;
    this.#deadline = now() + ms;
  }
  /** Counts one entry; true once the budget is spent (the clock is read at the first entry and every CLOCK_EVERY after). */
  spent(): boolean {
    return this.#seen++ % CLOCK_EVERY === 0 && this.#now() > this.#deadline;
  }
}

/** One entry about to be moved. */
export interface MovedEntry {
  /** The folder holding it, and its name there (the entry itself is not followed). */
  dirFd: number;
  name: string;
  /** How many folders deep it is now, as the kernel names its folder (0: at the root). */
  fromDepth: number;
  /** The root-relative path it lands at, its folder as the kernel names it. */
  lands: string;
  /** The caller's path of the entry, where it is (absent when that is no path of the world: the trash). */
  shown?: string;
  /** The caller's path of the entry where it lands. A refusal names the link by these two (`<shown>/<its path inside>`). */
  shownAfter: string;
  /** What a refusal says was left alone: "nothing was moved", "nothing was restored". */
  unchanged: string;
}

/** How many folders deep `folder` (root-relative; '' or '.' for the root) is. */
export function depthOf(folder: string): number {
  return folder === '' || folder === '.' ? 0 : folder.split('/').length;
}

/** The root-relative path of the folder `dirFd` holds, as the kernel names it. */
export function realFolder(root: WorldRoot, dirFd: number): string {
  const rel = canonicalRel(root.fd, dirFd);
  // Every folder an op opens was reached beneath the root: anything else is a broken world, not a caller's fault.
  if (rel === null) throw new Error('a folder opened beneath the world root is not inside it');
  return rel;
}

class Unchecked extends Error {}

/** The refusal of the move of `e`, or null when it takes no link further out (see the module note). */
export function judgeMovedLinks(e: MovedEntry, budget: LinkBudget): Result | null {
  if (depthOf(dir(e.lands)) >= e.fromDepth) return null;
  let st: fs.Stats;
  try {
    st = fs.lstatSync(atPath(e.dirFd, e.name));
  } catch {
    return null; // gone: the move itself answers for it
  }
  try {
    const found = st.isSymbolicLink() ? linkClimbing(e.dirFd, Buffer.from(e.name), e.lands, '') : st.isDirectory() ? walk(e.dirFd, Buffer.from(e.name), e.lands, '', 1, budget) : null;
    if (found === null) return null;
    const inside = (p: string) => (found === '' ? p : `${p}/${found}`);
    if (e.shown === undefined) return fail('bad_path', `${inside(e.shownAfter)} would be a link leading outside the world; ${e.unchanged}`);
    return fail('bad_path', `${inside(e.shown)} is a link that would lead outside the world from ${inside(e.shownAfter)}; ${e.unchanged}`);
  } catch (err) {
    const named = e.shown ?? e.shownAfter;
    if (err instanceof Unchecked) return fail('too_large', `the links in ${named} could not be checked: ${err.message}; ${e.unchanged}`);
    return failure(named, err, 'readdirent'); // an I/O error: bad_path with its text, as any op's
  }
}

/** `rel` when the link `name` in `dirFd`, landing at `lands`, climbs out from there; else null. */
function linkClimbing(dirFd: number, name: Buffer, lands: string, rel: string): string | null {
  let target: string;
  try {
    target = fs.readlinkSync(atPath(dirFd, name));
  } catch (err) {
    // Gone, or no longer a link: it moves as what it is now.
    if (errCode(err) === 'ENOENT' || errCode(err) === 'EINVAL') return null;
    throw err;
  }
  return climbsOut(lands, target) ? rel : null;
}

/**
 * The first link below the folder `name` in `dirFd` (landing at `lands`) that climbs out, by its
 * path inside; or null. Names are read as latin1 (one character per byte, as search.ts reads
 * them) and opened by their bytes, so any name can be; they are decoded as UTF-8 only for the
 * paths a refusal shows.
 */
function walk(dirFd: number, name: Buffer, lands: string, rel: string, depth: number, budget: LinkBudget): string | null {
  if (depth > MAX_DEPTH) throw new Unchecked(`it holds folders more than ${MAX_DEPTH} levels deep`);
  let fd: number;
  try {
    fd = fs.openSync(atPath(dirFd, name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  } catch (err) {
    const code = errCode(err);
    if (code === 'ENOENT') return null;
    // Swapped for a link since it was listed: judged as one.
    if (code === 'ELOOP' || code === 'ENOTDIR') return linkClimbing(dirFd, name, lands, rel);
    throw err;
  }
  try {
    const d = fs.opendirSync(fdPath(fd), { encoding: 'latin1' });
    try {
      for (let ent = d.readSync(); ent; ent = d.readSync()) {
        if (budget.spent()) throw new Unchecked(`what the op moves is more than can be looked through in ${budget.ms / 1000} s`);
        // Names only shape messages: whether a link climbs out depends on its folder's depth alone.
        const bytes = Buffer.from(ent.name, 'latin1');
        const shown = bytes.toString();
        const entLands = `${lands}/${shown}`;
        const entRel = rel === '' ? shown : `${rel}/${shown}`;
        const found = ent.isSymbolicLink() ? linkClimbing(fd, bytes, entLands, entRel) : ent.isDirectory() ? walk(fd, bytes, entLands, entRel, depth + 1, budget) : null;
        if (found !== null) return found;
      }
    } finally {
      d.closeSync();
    }
  } finally {
    fs.closeSync(fd);
  }
  return null;
}
