/**
 * list(path): one level, at most MAX_ENTRIES entries in the order the OS returns them, plus the
 * volume's free bytes. The editor's working files are left out; the withheld file shows size 0.
 *
 * @module
 */
import fs from 'node:fs';
import type { Entry, Result } from '../../lib/protocol/result.ts';
import { failure } from '../failure.ts';
import { withheldRule, type WithheldRule } from '../withheld.ts';
import { isWorkingName } from '../working-files.ts';
import { atPath, fdPath } from '../root.ts';
import { MAX_ENTRIES, type OpContext, type OpRequest, type StatfsLike } from '../types.ts';

const MAX_INT64 = (1n << 63n) - 1n;
/** Go's zero time.Time as JSON. */
export const ZERO_TIME = '0001-01-01T00:00:00Z';

/** Go's RFC 3339 with nanoseconds (time.RFC3339Nano) in UTC: fraction trimmed of trailing zeros. */
export function formatModTime(ns: bigint): string {
  let sec = ns / 1_000_000_000n;
  let frac = ns % 1_000_000_000n;
  if (frac < 0n) {
    frac += 1_000_000_000n;
    sec -= 1n;
  }
  const base = new Date(Number(sec) * 1000).toISOString().slice(0, 19);
  if (frac === 0n) return `${base}Z`;
  return `${base}.${frac.toString().padStart(9, '0').replace(/0+$/, '')}Z`;
}

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

export function list(ctx: OpContext, req: OpRequest): Result {
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
      // that is not valid UTF-8 can still be stat'ed.
      dir = fs.opendirSync(fdPath(fd), { encoding: 'buffer' as BufferEncoding, bufferSize: 64 });
    } catch (e) {
      return failure(name, e, 'readdirent');
    }
    try {
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
  return { entries, truncated, avail: availBytes(ctx.statfs, ctx.root.dir) };
}

/**
 * One listing entry; a stat failure (deleted since the directory was read) keeps it, zeroed. An
 * entry that is withheld shows size 0: its size says something about its content.
 */
export function entryOf(dirFd: number, d: Pick<fs.Dirent<Buffer>, 'name' | 'isDirectory'>, withheld: WithheldRule | null = null): Entry {
  const name = d.name.toString('utf8');
  try {
    const st = fs.lstatSync(atPath(dirFd, d.name), { bigint: true });
    const size = withheld?.judgeAt(dirFd, d.name, st) ? 0 : Number(st.size);
    return { name, size, is_dir: st.isDirectory(), mod_time: formatModTime(st.mtimeNs) };
  } catch {
    // Kept, with size 0 and a zero time, as Go keeps an entry whose Info() fails.
    return { name, size: 0, is_dir: d.isDirectory(), mod_time: ZERO_TIME };
  }
}
