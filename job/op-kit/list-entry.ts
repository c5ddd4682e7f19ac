/**
 * One listing entry as a list (files-list) and a search (files-search) answer it: shared here so
 * neither op's folder imports the other's.
 *
 * @module
 */
import fs from 'node:fs';
import type { Entry } from '../../lib/protocol/result.ts';
import type { WithheldRule } from '../runtime/withheld.ts';
import { atPath } from '../volume/root.ts';

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

/** Permission bits as three octal digits (`644`); the file type and setuid/setgid/sticky bits left out. */
export function modeDigits(mode: number | bigint): string {
  return Number(BigInt(mode) & 0o777n)
    .toString(8)
    .padStart(3, '0');
}

/**
 * One listing entry; a stat failure (deleted since the directory was read) keeps it, zeroed. An
 * entry that is withheld shows size 0: its size says something about its content.
 */
export function entryOf(dirFd: number, d: Pick<fs.Dirent<Buffer>, 'name' | 'isDirectory' | 'isSymbolicLink'>, withheld?: WithheldRule | null, skipGone?: false): Entry;
/** With `skipGone`, an entry that no longer exists is undefined (an index's page leaves it out). */
export function entryOf(dirFd: number, d: Pick<fs.Dirent<Buffer>, 'name' | 'isDirectory' | 'isSymbolicLink'>, withheld: WithheldRule | null, skipGone: true): Entry | undefined;
export function entryOf(dirFd: number, d: Pick<fs.Dirent<Buffer>, 'name' | 'isDirectory' | 'isSymbolicLink'>, withheld: WithheldRule | null = null, skipGone = false): Entry | undefined {
  const name = d.name.toString('utf8');
  try {
    const st = fs.lstatSync(atPath(dirFd, d.name), { bigint: true });
    const size = withheld?.judgeAt(dirFd, d.name, st) ? 0 : Number(st.size);
    return { name, size, is_dir: st.isDirectory(), mod_time: formatModTime(st.mtimeNs), mode: modeDigits(st.mode), is_symlink: st.isSymbolicLink() };
  } catch (e) {
    if (skipGone && (e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    // Kept, with size 0 and a zero time, as Go keeps an entry whose Info() fails.
    return { name, size: 0, is_dir: d.isDirectory(), mod_time: ZERO_TIME, mode: '000', is_symlink: d.isSymbolicLink() };
  }
}
