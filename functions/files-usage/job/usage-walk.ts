/**
 * usageWalk(root, path, {depth, top}): what a folder holds on disk, as `du` counts it: allocated
 * bytes (st_blocks × 512) and apparent bytes (st_size) of every entry under it, the folder itself
 * and its sub-folders included, a file with several names once (hard-links.ts); its direct entries
 * (and theirs, to `depth`) largest first; its `top` largest files; within a time budget.
 *
 * The walk holds to the world root's rules as search.ts does: each folder is opened relative to its
 * parent's fd with O_DIRECTORY|O_NOFOLLOW and each entry lstat'ed below that fd, so a link counts
 * its own size and is never entered, and nothing renamed or swapped meanwhile leads the walk out.
 *
 * What is not the world's: the ops' working names (the undo trash at the root, the withheld
 * ledger, working files and folders anywhere) are walked the same way but their bytes go to
 * `trash_bytes` only, never to the totals, the children or the largest files, and are never named.
 * The withheld file (and any other name of it) counts as a file of 0 bytes wherever it is: its
 * size says something about its content.
 *
 * Bounded memory whatever the tree: folders are read as streams (one open Dir per folder on the way
 * down), but small ones whole while the names so held stay under WHOLE_HELD_BYTES of folder size
 * (at most that many names); nothing else is kept per file; per folder on the way down only its running
 * totals at entry (the difference at its end is what it holds) and, above `depth`, a bounded heap of
 * its largest children (a bounded heap, job/listing/smallest.ts, CHILDREN_KEPT); the largest files in one heap of `top`.
 *
 * Names are read as latin1 text, one character per byte, so no Buffer is made per name; a name
 * goes back to its bytes only when it is not ASCII (to be stat'ed), and is decoded as UTF-8 only
 * when it is shown (a child's name, a largest file's path).
 *
 * Async: the walk lets the event loop turn now and then (job/op-kit/walk-clock.ts: a browse Pod answers others
 * meanwhile), so it answers a Promise.
 *
 * Its cost is one lstat per entry. Node has no fstatat, so an entry is named by its bare name with
 * the working folder moved to its folder through the folder's fd (folder-cwd.ts), not by
 * `/proc/self/fd/<fd>/<name>`, whose walk through /proc cost a third of the time; and a small
 * folder is read whole (WHOLE_DIR_BYTES), as streaming it made a Dirent per name. Measured
 * beside `du -s` in bench/files-usage.bench.ts.
 *
 * @module
 */
import fs from 'node:fs';
import { Smallest } from '../../../job/listing/smallest.ts';
import { CLOCK_EVERY, walkClock } from '../../../job/op-kit/walk-clock.ts';
import { type WithheldRule, withheldRule } from '../../../job/runtime/withheld.ts';
import { isWorkingName } from '../../../job/runtime/working-files.ts';
import { failure } from '../../../job/volume/failure.ts';
import type { FolderStamps } from '../../../job/volume/folder-stamps.ts';
import { clean } from '../../../job/volume/pathutil.ts';
import { errCode, fdPath, identityOf, type WorldRoot } from '../../../job/volume/root.ts';
import type { Result } from '../../../lib/protocol/result.ts';
import type { LargestFile, UsageChild, UsageFigures } from '../op.ts';
import { FolderCwd } from './folder-cwd.ts';
import { HardLinks } from './hard-links.ts';

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW } = fs.constants;
const DIR_FLAGS = O_RDONLY | O_DIRECTORY | O_NOFOLLOW;

/** The longest one walk runs; past it the answer is what was walked, `truncated`. */
export const USAGE_BUDGET_MS = 20_000;
/** Folders deeper than this below the path count by their own entry only (and the answer is `truncated`): a hostile tree costs bounded fds. */
const MAX_DEPTH = 512;
/**
 * Children kept per folder, by its level below the path (0: the path's own): the largest that
 * many. The product bounds the answer (at most 100 + 1,000 + 4,000 children at depth 3) so it
 * fits a result line whatever the names; the totals always count everything.
 */
const CHILDREN_KEPT = [100, 10, 4] as const;
const ASCII = /^[\x00-\x7f]*$/;
/** lstat's options, made once: a missing entry (gone since it was read) is undefined, not an error to build. */
const LSTAT = { throwIfNoEntry: false } as const;
const DIR_OPTIONS = { encoding: 'latin1', bufferSize: 1024 } as const;
/**
 * A folder whose size (st_size) is at most this is read whole, in one readdir (no Dirent per name:
 * a third of the walk's time when streamed), while the folders read whole and still open hold at
 * most WHOLE_HELD_BYTES of size between them; a bigger one is streamed. A folder's size is at least
 * its count of names on the common filesystems (ext4 and xfs: its blocks, btrfs: twice its names'
 * lengths, tmpfs: 20 bytes a name, ZFS: its count), so at most that many names are held at once.
 */
const WHOLE_DIR_BYTES = 64 << 10;
const WHOLE_HELD_BYTES = 256 << 10;

export interface UsageOptions {
  /** 1..3: how deep `children` go (1 = the folder's direct entries). */
  depth: number;
  /** 1..100: how many largest files in `largest`. */
  top: number;
  /** Default USAGE_BUDGET_MS. */
  budgetMs?: number;
  /** Milliseconds, monotonic. Tests pass a fake one. */
  now?: () => number;
  /** Where each folder met is stamped, before it is read (a browse Pod keeps the answer while they hold: job/runtime/warm-results.ts). */
  folders?: FolderStamps;
}

interface Tally {
  bytes: number;
  apparent: number;
  files: number;
}

/** One folder on the way down. */
interface Frame {
  fd: number;
  /** Its names, streamed, or read whole (`names`, the next at `next`). */
  dir: fs.Dir | null;
  names: string[] | null;
  next: number;
  /** Its size, while its names are held whole (0 when streamed). */
  held: number;
  /** Below the path: 0 for the path itself. */
  level: number;
  /** In the undo trash or a working folder: everything goes to `trash_bytes`. */
  trash: boolean;
  /** The folder's path from the root, decoded (a largest file's path starts with it). */
  prefix: string;
  /** Its name as a child is shown. */
  name: string;
  /** The totals when it was entered, before its own entry: what it holds is the difference at its end. */
  start: Tally;
  /** Its largest children, while `depth` goes below it. */
  kids: Smallest<UsageChild> | null;
  /** Its index in `folders` (-1: none). */
  stamp: number;
}

/** Largest first, then by name (by path for files): the order the answer shows them in, and which are kept. */
const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const childFirst = (a: UsageChild, b: UsageChild) => b.bytes - a.bytes || byText(a.name, b.name);
const fileFirst = (a: LargestFile, b: LargestFile) => b.bytes - a.bytes || byText(a.path, b.path);
/** Could an entry of `bytes` be kept (a cheap look before its name is decoded)? */
const mayKeep = <T extends { bytes: number }>(kept: Smallest<T>, bytes: number) => !kept.full || bytes >= kept.peekMax()!.bytes;

const toBytes = (latin1: string) => Buffer.from(latin1, 'latin1');
/** The name as shown (a listing's decoding of the same bytes). */
const utf8 = (latin1: string) => (ASCII.test(latin1) ? latin1 : toBytes(latin1).toString('utf8'));
const join = (prefix: string, name: string) => (prefix === '' ? name : `${prefix}/${name}`);
const clampInt = (x: number, lo: number, hi: number) => (Number.isInteger(x) ? Math.min(hi, Math.max(lo, x)) : lo);

/** The whole walk on an open root; see the module note. A failure (`not_found`, `bad_path`) answers as the other ops do. */
export async function usageWalk(root: WorldRoot, path: string, opts: UsageOptions): Promise<UsageFigures | Result> {
  const name = path === '' ? '.' : path;
  const cleaned = clean(path);
  const rel = cleaned === '.' ? '' : cleaned;
  const depth = clampInt(opts.depth, 1, CHILDREN_KEPT.length);
  const pastBudget = walkClock(opts.budgetMs ?? USAGE_BUDGET_MS, opts.now);

  const rule = withheldRule(root);
  const largest = new Smallest<LargestFile>(clampInt(opts.top, 1, 100), fileFirst);
  let baseFd: number;
  try {
    baseFd = root.openDir(name);
  } catch (e) {
    // The path names a file (a folder on the way that is not one fails again in fileAlone).
    if (errCode(e) === 'ENOTDIR') return fileAlone(root, name, rel, rule, largest);
    return failure(name, e, 'open');
  }
  let own: fs.Stats | undefined;
  try {
    own = fs.fstatSync(baseFd);
  } catch {
    // The folder's own entry is a few KiB; its contents are what is asked.
  }
  let heldBytes = 0;
  /** A folder's names: whole when it is small and the names held allow (see WHOLE_DIR_BYTES), else a stream. Throws as opendir does. */
  const entries = (fd: number, size: number | undefined): Pick<Frame, 'dir' | 'names' | 'next' | 'held'> => {
    if (size !== undefined && size <= WHOLE_DIR_BYTES && heldBytes + size <= WHOLE_HELD_BYTES) {
      const names = fs.readdirSync(fdPath(fd), 'latin1');
      heldBytes += size;
      return { dir: null, names, next: 0, held: size };
    }
    return { dir: fs.opendirSync(fdPath(fd), DIR_OPTIONS), names: null, next: 0, held: 0 };
  };
  let base: Pick<Frame, 'dir' | 'names' | 'next' | 'held'>;
  try {
    base = entries(baseFd, own?.size);
  } catch (e) {
    fs.closeSync(baseFd);
    return failure(name, e, 'readdirent');
  }

  const T: Tally = { bytes: 0, apparent: 0, files: 0 };
  const cwd = new FolderCwd();
  let dirs = 0;
  let trashBytes = 0;
  let truncated = false;
  const links = new HardLinks();
  const rootKids = new Smallest<UsageChild>(CHILDREN_KEPT[0], childFirst);
  const stamps = opts.folders;
  const stack: Frame[] = [{ fd: baseFd, ...base, level: 0, trash: false, prefix: rel, name: '', start: { ...T }, kids: rootKids, stamp: -1 }];
  if (own) {
    T.bytes += own.blocks * 512;
    T.apparent += own.size;
    if (stamps) stack[0].stamp = stamps.add(-1, '', own);
  } else stamps?.spoil();

  /** Lets go of a folder's names and fds. */
  const close = (f: Frame): void => {
    f.dir?.closeSync();
    f.names = null;
    heldBytes -= f.held;
    fs.closeSync(f.fd);
  };

  /** Closes a folder done with and hands what it held to its parent as a child, when it is one to show. */
  const finish = (f: Frame): void => {
    close(f);
    const parent = stack[stack.length - 1];
    if (!parent?.kids || f.trash) return;
    const child: UsageChild = { name: f.name, bytes: T.bytes - f.start.bytes, apparent_bytes: T.apparent - f.start.apparent, files: T.files - f.start.files, is_dir: true };
    if (f.kids) child.children = f.kids.drainSorted();
    parent.kids.offer(child);
  };

  /** Counts one entry of the folder `f`; a folder it can enter is pushed on the stack. */
  const visit = (f: Frame, n: string): void => {
    const nameAt = ASCII.test(n) ? n : toBytes(n);
    const at = cwd.at(f, f.fd, nameAt);
    let st: fs.Stats | undefined;
    try {
      st = fs.lstatSync(at, LSTAT);
    } catch {
      return; // not stat'able (its permissions): nothing of it can be told
    }
    if (st === undefined) return; // gone since the folder was read
    // The editor's, not the world's: counted apart, never named. All of them start with a dot.
    const trash = f.trash || (n.charCodeAt(0) === 0x2e && isWorkingName(n));

    if (!st.isDirectory()) {
      const withheld = isWithheld(rule, f.fd, nameAt, at, st);
      let bytes = withheld ? 0 : st.blocks * 512;
      let apparent = withheld ? 0 : st.size;
      let again = false;
      if (st.nlink > 1 && !withheld) {
        const v = links.meet(st.dev, inoKey(st, at), trash ? 'trash' : 'world');
        if (v === 'move') trashBytes -= bytes;
        if (v === 'skip') {
          again = true;
          bytes = 0;
          apparent = 0;
        }
      }
      if (trash) {
        trashBytes += bytes;
        return;
      }
      T.bytes += bytes;
      T.apparent += apparent;
      T.files++;
      if (f.kids && mayKeep(f.kids, bytes)) f.kids.offer({ name: utf8(n), bytes, apparent_bytes: apparent, files: 1, is_dir: false });
      // A second name of a file counted already is not a file of that size again.
      if (st.isFile() && !again && mayKeep(largest, bytes)) largest.offer({ path: join(f.prefix, utf8(n)), bytes, apparent_bytes: apparent });
      return;
    }

    const start = { ...T };
    const level = f.level + 1;
    if (trash) trashBytes += st.blocks * 512;
    else {
      dirs++;
      T.bytes += st.blocks * 512;
      T.apparent += st.size;
    }
    const shown = f.kids && !trash ? utf8(n) : '';
    const kids = !trash && level < depth ? new Smallest<UsageChild>(CHILDREN_KEPT[level], childFirst) : null;
    let fd = -1;
    let dir: Pick<Frame, 'dir' | 'names' | 'next' | 'held'> | undefined;
    if (level > MAX_DEPTH) truncated = true;
    else {
      try {
        fd = fs.openSync(at, DIR_FLAGS);
        dir = entries(fd, st.size);
      } catch {
        // Not readable, or swapped for a link since its lstat: its own entry is all that counts.
        if (fd >= 0) fs.closeSync(fd);
        fd = -1;
      }
    }
    // Stamped from the lstat taken before it was opened and read: a change after it shows.
    const stamp = stamps ? stamps.add(f.stamp, n, st) : -1;
    if (dir) stack.push({ fd, ...dir, level, trash, prefix: trash ? '' : join(f.prefix, utf8(n)), name: shown, start, kids, stamp });
    else if (f.kids && !trash) {
      const child: UsageChild = { name: shown, bytes: T.bytes - start.bytes, apparent_bytes: T.apparent - start.apparent, files: 0, is_dir: true };
      if (kids) child.children = [];
      f.kids.offer(child);
    }
  };

  let seen = 0;
  try {
    while (stack.length > 0) {
      const f = stack[stack.length - 1];
      let n: string | null;
      if (f.names) n = f.next < f.names.length ? f.names[f.next++] : null;
      else {
        try {
          n = f.dir!.readSync()?.name ?? null;
        } catch {
          n = null; // a folder that fails part-way (EIO): what was read of it counts
        }
      }
      if (n === null) {
        finish(stack.pop()!);
        continue;
      }
      if (++seen % CLOCK_EVERY === 0) {
        cwd.home(); // the clock may yield to others: never with the working folder moved
        if (await pastBudget()) {
          truncated = true;
          break;
        }
      }
      visit(f, n);
    }
    // Past the budget: each folder still open gives what was walked of it.
    while (stack.length > 0) finish(stack.pop()!);
  } finally {
    cwd.home();
    for (const f of stack) close(f);
  }
  return {
    path: rel,
    bytes: T.bytes,
    apparent_bytes: T.apparent,
    files: T.files,
    dirs,
    children: rootKids.drainSorted(),
    largest: largest.drainSorted(),
    trash_bytes: Math.max(0, trashBytes),
    truncated,
  };
}

/**
 * Is this entry the withheld file (by identity, or by a withheld content)? The rule's own verdict
 * (`judgeAt`, as a listing asks it), asked only of the few entries that could be: the same inode
 * as the withheld file's, or a regular file of a withheld size. The rest cost two comparisons, not
 * a second stat.
 */
function isWithheld(rule: WithheldRule, dirFd: number, name: string | Buffer, at: string | Buffer, st: fs.Stats): boolean {
  const id = rule.id;
  const sameIno = id !== null && st.ino === Number(id.ino);
  if (!sameIno && !(st.isFile() && rule.needsBytes(st.size))) return false;
  let big: fs.BigIntStats | undefined;
  try {
    big = fs.lstatSync(at, { bigint: true, throwIfNoEntry: false });
  } catch {
    return false; // gone or not stat'able: it yields nothing here
  }
  return big !== undefined && rule.judgeAt(dirFd, name, big);
}

/** The inode as a map key: the number, or its exact text past 2^53 (where a number would merge two). */
function inoKey(st: fs.Stats, at: string | Buffer): number | string {
  if (Number.isSafeInteger(st.ino)) return st.ino;
  try {
    return String(fs.lstatSync(at, { bigint: true }).ino);
  } catch {
    return st.ino;
  }
}

/** The answer for a path that names a file (a link inside the world to one followed, as a folder's would be): it alone. */
function fileAlone(root: WorldRoot, name: string, rel: string, rule: WithheldRule, largest: Smallest<LargestFile>): UsageFigures | Result {
  let st: fs.BigIntStats;
  try {
    st = root.stat(name);
  } catch (e) {
    return failure(name, e, 'stat');
  }
  const withheld = rule.isIdentity(identityOf(st)) || (st.isFile() && rule.needsBytes(st.size) && rule.judgePath(root, name));
  const bytes = withheld ? 0 : Number(st.blocks) * 512;
  const apparent = withheld ? 0 : Number(st.size);
  if (st.isFile()) largest.offer({ path: rel, bytes, apparent_bytes: apparent });
  return { path: rel, bytes, apparent_bytes: apparent, files: 1, dirs: 0, children: [], largest: largest.drainSorted(), trash_bytes: 0, truncated: false };
}
