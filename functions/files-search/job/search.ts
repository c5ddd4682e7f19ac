/**
 * search(path, q, limit): every entry under `path`, at any depth, whose name matches `q`
 * (name-match.ts), in byte order of path, at most `limit` of them, within a time budget.
 *
 * The walk holds to the world root's rules without resolving paths: each folder is opened
 * relative to its parent's fd with O_DIRECTORY|O_NOFOLLOW, so a link is never descended (it is a
 * candidate by its own name only), and nothing renamed or swapped during the walk can lead it
 * out. The ops' working names are neither listed nor entered; the withheld file is listed as a
 * listing lists it (size 0).
 *
 * Byte order of path with bounded memory: one folder is read at a time, each name judged as it is
 * read, and of a folder only its sub-folders and its smallest matches (a limit's worth: no more
 * could be answered) are kept and sorted, so memory follows the limit, the sub-folders of the
 * folders on the way down and the depth, never the size of a folder or of the tree. Inside a
 * folder a sub-folder `d` sorts as `d/`: its paths come after `d-x` and `d.txt` (both below `/`),
 * exactly where the whole paths sort. The walk stops once it has `limit` matches and sees one
 * more (`truncated`); it also stops when its time budget (SEARCH_BUDGET_MS) is spent, and lets the
 * event loop turn every so often, so a browse Pod answers other requests meanwhile.
 *
 * Names are read as latin1 text: one character per byte, so comparing them as strings is comparing
 * their bytes, and no Buffer is made per name (most of a walk's cost otherwise). A name is turned
 * back into its bytes only where it is opened or stat'ed, and decoded as UTF-8 only to be matched
 * when it is not plain ASCII (for which the two are the same).
 *
 * @module
 */
import fs from 'node:fs';
import { entryOf } from '../../../job/op-kit/list-entry.ts';
import { CLOCK_EVERY, walkClock } from '../../../job/op-kit/walk-clock.ts';
import type { OpContext, OpRequestOf } from '../../../job/runtime/types.ts';
import { type WithheldRule, withheldRule } from '../../../job/runtime/withheld.ts';
import { isWorkingName } from '../../../job/runtime/working-files.ts';
import { fail, failure } from '../../../job/volume/failure.ts';
import { clean } from '../../../job/volume/pathutil.ts';
import { atPath, fdPath, type WorldRoot } from '../../../job/volume/root.ts';
import { SEARCH_BUDGET_MS, SEARCH_DEFAULT_LIMIT, SEARCH_MAX_LIMIT, SEARCH_MIN_QUERY } from '../../../lib/protocol/limits.ts';
import type { Result, SearchMatch } from '../../../lib/protocol/result.ts';
import { contentSearchTree } from './content-search.ts';
import { nameMatcher, queryLength } from './name-match.ts';

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW } = fs.constants;
const DIR_FLAGS = O_RDONLY | O_DIRECTORY | O_NOFOLLOW;
const ASCII = /^[\x00-\x7f]*$/;

export interface SearchOptions {
  q: string;
  /** 1–SEARCH_MAX_LIMIT; anything else means the default. */
  limit?: number;
  /** Default SEARCH_BUDGET_MS. */
  budgetMs?: number;
  /** Milliseconds, monotonic. Tests pass a fake one. */
  now?: () => number;
}

/** One item of a folder's walk: a matching entry, or (for a sub-folder) the place its contents sort at. */
interface Item {
  /** latin1: `name`, or `name/` for a sub-folder's contents. */
  key: string;
  /** The name's bytes as latin1 text. */
  name: string;
  /** The name as shown (UTF-8 decoded): set on a match. */
  text: string;
  dir: boolean;
  /** True for the sub-folder's contents, false for a match. */
  descend: boolean;
}

interface Frame {
  fd: number;
  /** The folder's path from the root, "" for the root. */
  prefix: string;
  items: Item[];
  next: number;
}

export function search(ctx: OpContext, req: OpRequestOf<'search'>): Promise<Result> {
  // With `text` (the route's `content`), the files' lines are searched instead (content-search.ts); `q` filters names.
  if (req.text !== undefined) return contentSearchTree(ctx.root, req.path, { content: req.text, q: req.q, limit: req.limit });
  return searchTree(ctx.root, req.path, { q: req.q ?? '', limit: req.limit });
}

/** The whole search on an open root; see the module note. */
export async function searchTree(root: WorldRoot, path: string, o: SearchOptions): Promise<Result> {
  const name = path === '' ? '.' : path;
  if (queryLength(o.q) < SEARCH_MIN_QUERY) return fail('bad_path', `a search needs at least ${SEARCH_MIN_QUERY} characters`);
  const limit = o.limit !== undefined && Number.isInteger(o.limit) && o.limit >= 1 ? Math.min(o.limit, SEARCH_MAX_LIMIT) : SEARCH_DEFAULT_LIMIT;
  const pastBudget = walkClock(o.budgetMs ?? SEARCH_BUDGET_MS, o.now);
  const matches = nameMatcher(o.q);

  let baseFd: number;
  try {
    baseFd = root.openDir(name);
  } catch (e) {
    return failure(name, e, 'open');
  }
  const base = clean(path);
  const frames: Frame[] = [];
  const found: SearchMatch[] = [];
  let scanned = 0;
  let truncated = false;
  const withheld = withheldRule(root);
  /** Reads a folder; null when the budget ran out while reading it (its part is dropped, see readFolder). */
  const read = async (fd: number): Promise<Item[] | null> => {
    const r = await readFolder(fd, limit - found.length + 1, matches, pastBudget);
    scanned += r.scanned;
    return r.items;
  };
  try {
    let items: Item[] | null;
    try {
      items = await read(baseFd);
    } catch (e) {
      fs.closeSync(baseFd);
      return failure(name, e, 'readdirent');
    }
    frames.push({ fd: baseFd, prefix: base === '.' ? '' : base, items: items ?? [], next: 0 });
    truncated = items === null;
    while (!truncated && frames.length > 0) {
      const top = frames[frames.length - 1];
      if (top.next === top.items.length) {
        fs.closeSync(top.fd);
        frames.pop();
        continue;
      }
      const it = top.items[top.next++];
      if (!it.descend) {
        if (found.length === limit) {
          truncated = true;
          break;
        }
        found.push(matchOf(top, it, withheld));
        continue;
      }
      if (await pastBudget()) {
        truncated = true;
        break;
      }
      const fd = openChild(top.fd, bytes(it.name));
      if (fd === null) continue;
      try {
        items = await read(fd);
      } catch {
        // Not readable (its permissions, or gone meanwhile): the search goes on without it.
        fs.closeSync(fd);
        continue;
      }
      frames.push({ fd, prefix: join(top.prefix, utf8(it.name)), items: items ?? [], next: 0 });
      truncated = items === null;
    }
  } finally {
    for (const f of frames) fs.closeSync(f.fd);
  }
  return { matches: found, truncated, scanned };
}

const bytes = (latin1: string) => Buffer.from(latin1, 'latin1');
/** The name as it is shown and matched (a listing's decoding of the same bytes). */
const utf8 = (latin1: string) => (ASCII.test(latin1) ? latin1 : bytes(latin1).toString('utf8'));

function join(prefix: string, name: string): string {
  return prefix === '' ? name : `${prefix}/${name}`;
}

function matchOf(f: Frame, it: Item, withheld: WithheldRule | null): SearchMatch {
  // A match shows no mode or link flag (the shape), so the dirent's link type is not needed.
  const e = entryOf(f.fd, { name: bytes(it.name), isDirectory: () => it.dir, isSymbolicLink: () => false }, withheld);
  return { path: join(f.prefix, it.text), name: e.name, size: e.size, is_dir: e.is_dir, mod_time: e.mod_time };
}

/**
 * A sub-folder, opened relative to its parent without following a link. Null when it cannot be
 * (gone since it was read, swapped for a link, not readable): the search goes on without it.
 */
function openChild(parentFd: number, name: Buffer): number | null {
  try {
    return fs.openSync(atPath(parentFd, name), DIR_FLAGS);
  } catch {
    return null;
  }
}

const byKey = (a: Item, b: Item) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

/** Keeps the `keep` smallest items (by key). */
function smallest(items: Item[], keep: number): void {
  items.sort(byKey);
  items.length = Math.min(items.length, keep);
}

/**
 * One folder's walk items, in search order: its matches and its sub-folders' contents. Every
 * name is judged as it is read, and only what the walk can still answer is kept: the `want`
 * smallest matches (more could never be reached before the limit, whatever the sub-folders hold)
 * and one item per sub-folder. So a folder of any size costs the memory of its sub-folders and a
 * limit's worth of names, never of all its names (a browse Pod runs with a small heap). Working
 * names are neither judged nor entered. `items` is null when the budget ran out part-way: what
 * was read of the folder cannot be ordered against the rest, so none of it is answered.
 */
async function readFolder(fd: number, want: number, matches: (name: string) => boolean, pastBudget: () => Promise<boolean>): Promise<{ items: Item[] | null; scanned: number }> {
  const hits: Item[] = [];
  const subs: Item[] = [];
  let scanned = 0;
  // latin1: the raw bytes, one character each (see the module note), so a name that is not valid
  // UTF-8 still sorts by its bytes and can be opened.
  const dir = fs.opendirSync(fdPath(fd), { encoding: 'latin1', bufferSize: 1024 });
  try {
    for (;;) {
      const d = dir.readSync();
      if (d === null) break;
      // The editor's, not the world's: neither shown nor entered. All of them start with a dot.
      if (d.name.charCodeAt(0) === 0x2e && isWorkingName(d.name)) continue;
      scanned++;
      if (scanned % CLOCK_EVERY === 0 && (await pastBudget())) return { items: null, scanned };
      // The entry's own type, never a link's target's: a link is not a folder here.
      const isDir = d.isDirectory();
      if (isDir) subs.push({ key: `${d.name}/`, name: d.name, text: '', dir: true, descend: true });
      const text = utf8(d.name);
      if (!matches(text)) continue;
      hits.push({ key: d.name, name: d.name, text, dir: isDir, descend: false });
      if (hits.length >= 2 * want) smallest(hits, want);
    }
  } finally {
    dir.closeSync();
  }
  smallest(hits, want);
  const items = hits.concat(subs);
  return { items: items.sort(byKey), scanned };
}

export const runs = { search };
