/**
 * The withheld-file ledger: the contents the withheld file has had (size and SHA-256 only, never
 * the bytes), in `.felis-edit-withheld/ledger` at the world's root, so a link left holding an old
 * content is still known (withheld.ts). A working name: no op lists, addresses or packs it.
 *
 * Hostile like everything on the volume: the folder and the file are opened without following
 * links; the file must be a regular file with one link, bounded, in the exact format, or it is an
 * empty ledger (never an error, never read through). A write replaces it atomically (a temp file
 * in its folder, synced, renamed over), after removing whatever else was planted there, fd by fd.
 *
 * @module
 */

import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { bestEffort } from '../volume/failure.ts';
import { removeAllAt } from '../volume/remove-all.ts';
import { atPath, errCode, type WorldRoot } from '../volume/root.ts';

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK, O_DIRECTORY } = fs.constants;

/** The ledger's folder at the world's root (a working name: see working-files.ts) and its file. */
export { LEDGER_DIR } from '../../lib/protocol/working-names.ts';

import { LEDGER_DIR } from '../../lib/protocol/working-names.ts';
export const LEDGER_FILE = 'ledger';
/** Contents remembered; the oldest goes first. */
export const MAX_LEDGER_ENTRIES = 64;
/** A ledger larger than this is none of ours. */
const MAX_LEDGER_BYTES = 32 << 10;
/** One withheld content: its size and digest (null: too large to hash, withheld by size). */
export interface Content {
  size: number;
  sha256: string | null;
}

/** Reads from position 0 up to `max` bytes (stops at EOF). */
export function readFrom0(fd: number, max: number): Buffer {
  const buf = Buffer.allocUnsafe(max);
  let n = 0;
  while (n < max) {
    const got = fs.readSync(fd, buf, n, max - n, n);
    if (got === 0) break;
    n += got;
  }
  return buf.subarray(0, n);
}

const HEX64 = /^[0-9a-f]{64}$/;

/** Parses a ledger; anything not exactly ours is empty. */
export function parseLedger(text: string): Content[] {
  try {
    const v = JSON.parse(text) as { v?: unknown; contents?: unknown };
    if (v?.v !== 1 || !Array.isArray(v.contents) || v.contents.length > MAX_LEDGER_ENTRIES) return [];
    const out: Content[] = [];
    for (const c of v.contents as Array<{ size?: unknown; sha256?: unknown }>) {
      if (!c || typeof c !== 'object' || !Number.isSafeInteger(c.size) || (c.size as number) <= 0) return [];
      if (!(c.sha256 === null || (typeof c.sha256 === 'string' && HEX64.test(c.sha256)))) return [];
      out.push({ size: c.size as number, sha256: c.sha256 as string | null });
    }
    return out;
  } catch {
    return [];
  }
}

/** The ledger's folder, opened without following a link, or -1. */
function openLedgerDir(root: WorldRoot): number {
  try {
    return fs.openSync(atPath(root.fd, LEDGER_DIR), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  } catch {
    return -1;
  }
}

/** The remembered contents: a regular file with one link, read whole, or nothing. Never throws. */
export function readLedger(root: WorldRoot): Content[] {
  const dfd = openLedgerDir(root);
  if (dfd < 0) return [];
  try {
    const fd = fs.openSync(atPath(dfd, LEDGER_FILE), O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
    try {
      const st = fs.fstatSync(fd);
      if (!st.isFile() || st.nlink !== 1 || st.size > MAX_LEDGER_BYTES) return [];
      const b = readFrom0(fd, MAX_LEDGER_BYTES + 1);
      return b.length > MAX_LEDGER_BYTES ? [] : parseLedger(b.toString('utf8'));
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return [];
  } finally {
    fs.closeSync(dfd);
  }
}

/** The ledger's folder for a write: a planted link or file at its name removed (never followed), created when missing. */
function ledgerDirForWrite(root: WorldRoot): number {
  const at = atPath(root.fd, LEDGER_DIR);
  let fd = openLedgerDir(root);
  if (fd >= 0) return fd;
  let st: fs.Stats | undefined;
  try {
    st = fs.lstatSync(at);
  } catch (e) {
    if (errCode(e) !== 'ENOENT') throw e;
  }
  // A link or a file planted at the folder's name: the name goes, the target is never touched.
  if (st && !st.isDirectory()) fs.unlinkSync(at);
  fs.mkdirSync(at, 0o700);
  fd = openLedgerDir(root);
  if (fd < 0) throw new Error('the ledger folder cannot be opened');
  return fd;
}

/** Replaces the ledger with `contents`, atomically. Throws on failure (callers treat it as best effort). */
export function writeLedger(root: WorldRoot, contents: Content[]): void {
  const dfd = ledgerDirForWrite(root);
  try {
    // Leftovers of a Job that died mid-write, and anything planted here, go first.
    for (const n of fs.readdirSync(atPath(dfd, '.')).slice(0, 64)) {
      // fd by fd, never following a link (a path-based removal could be raced out of the folder).
      if (n !== LEDGER_FILE) bestEffort(() => removeAllAt(dfd, n));
    }
    const tmp = `${LEDGER_FILE}-${randomBytes(6).toString('hex')}`;
    const fd = fs.openSync(atPath(dfd, tmp), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
    try {
      fs.writeSync(fd, JSON.stringify({ v: 1, contents }));
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    try {
      // Replaces whatever is at the name (a planted link is replaced, not followed).
      fs.renameSync(atPath(dfd, tmp), atPath(dfd, LEDGER_FILE));
    } catch (e) {
      const code = errCode(e);
      if (code !== 'EISDIR' && code !== 'ENOTEMPTY' && code !== 'EEXIST') {
        bestEffort(() => fs.unlinkSync(atPath(dfd, tmp)));
        throw e;
      }
      // A folder planted at the ledger's name.
      removeAllAt(dfd, LEDGER_FILE);
      fs.renameSync(atPath(dfd, tmp), atPath(dfd, LEDGER_FILE));
    }
    bestEffort(() => fs.fsyncSync(dfd));
  } finally {
    fs.closeSync(dfd);
  }
}
