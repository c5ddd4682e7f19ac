/**
 * list(path): one level, at most MAX_ENTRIES entries in the order the OS returns them, plus the
 * volume's free bytes. The editor's working files are left out; the withheld file shows size 0.
 *
 * Given a `limit`, `after` or `q` (a paged listing), the entries are instead the first `limit` in
 * byte order of name that sort strictly after `after` and contain `q` in any case, and `truncated`
 * says there are more. Byte order needs every name looked at, but not kept: the scan keeps only
 * the `limit` + 1 smallest names that qualify (job/listing/smallest.ts), so a folder of any size costs a
 * page's worth of memory, and only the page's entries are stat'ed. A name that is not valid UTF-8
 * sorts as the answer shows it (orderKey), so a page's last name is a cursor for the next.
 *
 * Every entry carries its permission bits and whether it is a symbolic link (lstat: a link is
 * listed as itself, never followed).
 *
 * @module
 */
import { isUtf8 } from 'node:buffer';
import fs from 'node:fs';
import { type IndexedName, type ListIndexes, stampOf } from '../../../job/listing/list-index.ts';
import { Smallest } from '../../../job/listing/smallest.ts';
import { entryOf } from '../../../job/op-kit/list-entry.ts';
import { MAX_ENTRIES, type OpContext, type OpRequestOf, type StatfsLike } from '../../../job/runtime/types.ts';
import { type WithheldRule, withheldRule } from '../../../job/runtime/withheld.ts';
import { isWorkingName } from '../../../job/runtime/working-files.ts';
import { trashBytes } from '../../../job/trash/room.ts';
import { failure } from '../../../job/volume/failure.ts';
import { fdPath } from '../../../job/volume/root.ts';
import { PAGE_DEFAULT_ENTRIES, PAGE_MAX_ENTRIES } from '../../../lib/protocol/op-query.ts';
import type { Entry, Result } from '../../../lib/protocol/result.ts';

const MAX_INT64 = (1n << 63n) - 1n;
/** Free bytes = bavail × bsize, capped at 2^63−1; -1 when statfs fails. */
export function availBytes(statfs: (path: string) => StatfsLike, root: string): number {
  let free: bigint;
  try {
    const st = statfs(root);
    free = BigInt(st.bavail) * BigInt(st.bsize);
  } catch {
    return -1;
  }
  if (free > MAX_INT64) free = MAX_INT64;
  if (free < 0n) return -1;
  return Number(free);
}

export function list(ctx: OpContext, req: OpRequestOf<'list'>): Result {
  const name = req.path === '' ? '.' : req.path;
  let fd: number;
  try {
    fd = ctx.root.openDir(name);
  } catch (e) {
    return failure(name, e, 'open');
  }
  const entries: Entry[] = [];
  let truncated = false;
  // Any name for the withheld file (itself, a hard link, a file holding a withheld content) is listed with size 0.
  const withheld = withheldRule(ctx.root);
  try {
    let dir: fs.Dir;
    try {
      // Raw names (Node supports 'buffer' here; the typings only list text encodings), so a name
      // that is not valid UTF-8 can still be stat'ed. A paged listing reads every name of the
      // folder: as latin1 text (one character per byte, so as raw, and several times cheaper to
      // make than a buffer each), in bigger batches.
      dir = isPaged(req) ? fs.opendirSync(fdPath(fd), { encoding: 'latin1', bufferSize: 1024 }) : fs.opendirSync(fdPath(fd), { encoding: 'buffer' as BufferEncoding, bufferSize: 64 });
    } catch (e) {
      return failure(name, e, 'readdirent');
    }
    try {
      if (isPaged(req)) {
        const r = page(fd, dir, req, withheld, name, ctx.listIndexes);
        return r.code === undefined ? { ...r, avail: availBytes(ctx.statfs, ctx.root.dir), trash_bytes: trashBytes(ctx) } : r;
      }
      for (;;) {
        let d: fs.Dirent<Buffer> | null;
        try {
          d = dir.readSync() as unknown as fs.Dirent<Buffer> | null;
        } catch (e) {
          return failure(name, e, 'readdirent');
        }
        if (d === null) break;
        if (isWorkingName(d.name)) continue; // the editor's, not the world's
        if (entries.length === MAX_ENTRIES) {
          truncated = true;
          break;
        }
        entries.push(entryOf(fd, d, withheld));
      }
    } finally {
      dir.closeSync();
    }
  } finally {
    fs.closeSync(fd);
  }
  return { entries, truncated, avail: availBytes(ctx.statfs, ctx.root.dir), trash_bytes: trashBytes(ctx) };
}

/** Any of the query's fields makes a paged listing; none is Felis's listing. */
export function isPaged(req: Pick<OpRequestOf<'list'>, 'limit' | 'after' | 'q'>): boolean {
  return req.limit !== undefined || req.after !== undefined || req.q !== undefined;
}

/** What a name is matched in: composed, lower case, so `Ä`, `ä` and a decomposed `ä` all match. */
export function foldName(s: string): string {
  return s.normalize('NFC').toLowerCase();
}

/** A name's bytes as latin1 text: one character per byte, so text order is byte order. */
const bytesText = (b: Buffer) => b.toString('latin1');
const NON_ASCII = /[\x80-\xff]/;

/**
 * What a name (as latin1 text) is ordered by: its bytes, unless it is not valid UTF-8; then those
 * of the name as the answer shows it (bad bytes as U+FFFD), so that the `after` a caller sends back
 * from a page (its `next`) sorts where that page ended. Two names that show alike sort alike.
 */
export function orderKey(name: string): string {
  if (!NON_ASCII.test(name)) return name;
  const raw = Buffer.from(name, 'latin1');
  return isUtf8(raw) ? name : bytesText(Buffer.from(raw.toString('utf8'), 'utf8'));
}

/** A name kept for the page: the dirent as read (its name latin1 text), and its order key. */
interface Kept {
  key: string;
  d: fs.Dirent<string>;
}

/** By order key, then (two names that show alike) by name: the order a folder's index keeps too. */
const byKey = (a: Kept, b: Kept) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.d.name < b.d.name ? -1 : a.d.name > b.d.name ? 1 : 0);

/**
 * The paged listing (see the module comment); `dir` is open, and closed by the caller. With
 * `indexes` (the browse Pod's), a page is read from the folder's index when it can be trusted
 * (job/listing/list-index.ts), and a scan records the names it reads for one.
 */
function page(fd: number, dir: fs.Dir, req: OpRequestOf<'list'>, withheld: WithheldRule | null, name: string, indexes?: ListIndexes): Result {
  // The callers refuse other sizes; the bound holds whatever reaches the op.
  const limit = Math.min(Math.max(req.limit ?? PAGE_DEFAULT_ENTRIES, 1), PAGE_MAX_ENTRIES);
  const after = req.after ? bytesText(Buffer.from(req.after, 'utf8')) : undefined;
  const needle = req.q ? foldName(req.q) : '';
  let rec: ReturnType<ListIndexes['record']>;
  if (indexes) {
    // Stat'ed before any name is read: a change during the scan then shows as a different stamp.
    const stamp = stampOf(fd);
    const ix = indexes.lookup(stamp);
    if (ix) return indexedPage(fd, ix, after, needle, limit, withheld);
    rec = indexes.record(stamp);
  }
  // One more than the page: whether it is kept says whether there is more.
  const kept = new Smallest<Kept>(limit + 1, byKey);
  for (;;) {
    let d: fs.Dirent<string> | null;
    try {
      d = dir.readSync();
    } catch (e) {
      rec?.abandon();
      return failure(name, e, 'readdirent');
    }
    if (d === null) break;
    const key = orderKey(d.name);
    rec?.add(key, d.name, d.isDirectory() ? 'd' : d.isSymbolicLink() ? 'l' : 'f');
    if (after !== undefined && key <= after) continue;
    // The cheap test first: most names of a big folder sort after the page and are never matched.
    if (kept.size > limit && key >= kept.peekMax()!.key && (key > kept.peekMax()!.key || d.name >= kept.peekMax()!.d.name)) continue;
    if (isWorkingName(d.name)) continue; // the editor's, not the world's (judged on latin1 text)
    if (needle && !foldName(Buffer.from(d.name, 'latin1').toString('utf8')).includes(needle)) continue;
    kept.offer({ key, d });
  }
  rec?.finish();
  const names = kept.drainSorted();
  const truncated = names.length > limit;
  if (truncated) names.length = limit;
  return {
    entries: names.map(({ d }) => entryOf(fd, { name: Buffer.from(d.name, 'latin1'), isDirectory: () => d.isDirectory(), isSymbolicLink: () => d.isSymbolicLink() }, withheld)),
    truncated,
  };
}

/**
 * A page read from the folder's index: the same filters as the scan, in the same order; entries are
 * stat'ed fresh as the scan's are. A name gone since (it cannot be: the folder's mtime would have
 * moved) is left out rather than shown zeroed.
 */
function indexedPage(fd: number, ix: NonNullable<ReturnType<ListIndexes['lookup']>>, after: string | undefined, needle: string, limit: number, withheld: WithheldRule | null): Result {
  const kept: IndexedName[] = [];
  ix.read(after, (n) => {
    if (isWorkingName(n.name)) return true;
    if (needle && !foldName(Buffer.from(n.name, 'latin1').toString('utf8')).includes(needle)) return true;
    kept.push(n);
    return kept.length <= limit;
  });
  const truncated = kept.length > limit;
  if (truncated) kept.length = limit;
  const entries: Entry[] = [];
  for (const n of kept) {
    const e = entryOf(fd, { name: Buffer.from(n.name, 'latin1'), isDirectory: () => n.type === 'd', isSymbolicLink: () => n.type === 'l' }, withheld, true);
    if (e) entries.push(e);
  }
  return { entries, truncated };
}

export const runs = { list };
