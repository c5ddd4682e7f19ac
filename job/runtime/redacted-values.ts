/**
 * The root server.properties keeps its redacted values through every write. A read shows
 * `rcon.password=<redacted by felis>` (guard.ts), so a caller that edits the file and sends it back
 * sends placeholders. Every op that puts new content where the root server.properties is (or onto
 * it, by identity, as the read rule matches) asks here before the content lands: each placeholder
 * gets the value that key has on disk at that moment (`keepRedactedValues`), or the op is refused
 * with `redacted_value_unknown` and nothing is written. Writing the placeholder itself would set a
 * password anyone can read in this source. See docs/withheld-file.md.
 *
 * The ops: write (one-shot Job, edit session, env content), a single upload, an upload session's
 * commit, a pull, an extraction, a trash restore, a copy and a move.
 *
 * @module
 */

import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Result } from '../../lib/protocol/result.ts';
import { bestEffort, fail } from '../volume/failure.ts';
import { keepRedactedValues, mayHoldPlaceholder, PROPERTIES_PATH, propertiesIdentity, REDACTED } from '../volume/guard.ts';
import { atPath, canonicalRel, identityOf, type Parent, sameIdentity, type WorldRoot } from '../volume/root.ts';
import { GAME_GID, GAME_UID, MAX_READ_BYTES, type OpContext } from './types.ts';
import { readFrom0 } from './withheld-ledger.ts';
import { TEMP_PREFIX } from './working-files.ts';

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK } = fs.constants;
const PLACEHOLDER = Buffer.from(`=${REDACTED}`);
const SCAN_CHUNK = 1 << 16;

/**
 * Does content written as `name` in the folder `dirFd` (where it lands, links already followed) go
 * into the root server.properties? By identity (the file there is it, or a hard link to it, as a
 * read redacts it) or by place (the name the root server.properties leads to).
 */
export function landsOnProperties(root: WorldRoot, dirFd: number, name: string | null): boolean {
  if (name === null) return false;
  const props = propertiesIdentity(root);
  if (props) {
    const st = fs.lstatSync(atPath(dirFd, name), { bigint: true, throwIfNoEntry: false });
    if (st?.isFile() && sameIdentity(identityOf(st), props)) return true;
  }
  let landing: Parent;
  try {
    landing = root.landingOf(PROPERTIES_PATH);
  } catch {
    return false;
  }
  try {
    if (landing.name !== name) return false;
    return sameIdentity(identityOf(fs.fstatSync(landing.fd, { bigint: true })), identityOf(fs.fstatSync(dirFd, { bigint: true })));
  } finally {
    landing.close();
  }
}

/** The root server.properties' bytes now, or null when there is none (or one too large for a read to have shown). */
function onDisk(root: WorldRoot): Buffer | null {
  let fd: number;
  try {
    fd = root.openFile(PROPERTIES_PATH, O_RDONLY | O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const st = fs.fstatSync(fd, { bigint: true });
    if (!st.isFile() || st.size > BigInt(MAX_READ_BYTES)) return null;
    return readFrom0(fd, MAX_READ_BYTES);
  } finally {
    fs.closeSync(fd);
  }
}

export function unknownValue(name: string, key: string): Result {
  return fail('redacted_value_unknown', `${name}: ${key}=${REDACTED} stands for the value on disk, and ${PROPERTIES_PATH} has no ${key} line to keep; nothing was written. Send the value itself`);
}

/** `sent` with the placeholders given their values on disk, or the refusal (for content that lands on the properties). */
function kept(root: WorldRoot, name: string, sent: Buffer): Buffer | Result {
  const k = keepRedactedValues(onDisk(root), sent);
  return 'bytes' in k ? k.bytes : unknownValue(name, k.unknown);
}

/**
 * The content to write at `parent`: `sent` itself, unless it lands on the root server.properties
 * and holds placeholders (then with the values on disk), or the refusal.
 */
export function valuesKept(root: WorldRoot, parent: Parent, name: string, sent: Buffer): Buffer | Result {
  if (!mayHoldPlaceholder(sent) || !landsOnProperties(root, parent.fd, parent.name)) return sent;
  return kept(root, name, sent);
}

/** True when the open file holds the placeholder's bytes anywhere (read in chunks: any size). */
function fileMayHoldPlaceholder(fd: number): boolean {
  const buf = Buffer.allocUnsafe(SCAN_CHUNK + PLACEHOLDER.length);
  let carry = 0;
  let pos = 0;
  for (;;) {
    const got = fs.readSync(fd, buf, carry, SCAN_CHUNK, pos);
    if (got === 0) return false;
    pos += got;
    const have = carry + got;
    if (buf.subarray(0, have).includes(PLACEHOLDER)) return true;
    carry = Math.min(PLACEHOLDER.length - 1, have);
    buf.copy(buf, 0, have - carry, have);
  }
}

/**
 * The same rule for content already staged in a file (`staged`, a path of ours: an upload's
 * working file, a pulled file, an extracted entry, a trash slot; or an open file a copy or a move
 * takes there) that is about to land on the root
 * server.properties: null when it lands as it is, the bytes to land instead (at most a read's
 * limit, plus the values), or the refusal. Staged content over a read's limit cannot have come
 * from a read; it is refused only when it holds a placeholder at all.
 */
export function stagedValuesKept(root: WorldRoot, name: string, staged: string | number): Buffer | null | Result {
  const fd = typeof staged === 'number' ? staged : fs.openSync(staged, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  let bytes: Buffer;
  try {
    const st = fs.fstatSync(fd, { bigint: true });
    if (!st.isFile()) return null;
    if (st.size > BigInt(MAX_READ_BYTES)) {
      if (!fileMayHoldPlaceholder(fd)) return null;
      return fail('redacted_value_unknown', `${name} holds ${REDACTED} and is larger than ${MAX_READ_BYTES} bytes, more than a read shows: its redacted values cannot be kept; nothing was written`);
    }
    bytes = readFrom0(fd, MAX_READ_BYTES + 1);
  } finally {
    if (fd !== staged) fs.closeSync(fd);
  }
  if (!mayHoldPlaceholder(bytes)) return null;
  const k = kept(root, name, bytes);
  return Buffer.isBuffer(k) && k.equals(bytes) ? null : k;
}

/**
 * Writes `bytes` as a new working file in the folder `dir` (a path), with `mode`, synced and given
 * to the game's user: what lands in place of staged content whose values were kept. Returns its
 * path and SHA-256; a failure leaves nothing behind.
 */
export function writeWorking(ctx: OpContext, dir: string, bytes: Buffer, mode: number): { path: string; sha256: string } {
  const tmp = path.join(dir, TEMP_PREFIX + ctx.randomBytes(6).toString('hex'));
  const fd = fs.openSync(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode);
  try {
    try {
      fs.fchmodSync(fd, mode); // the umask may have narrowed it
      let off = 0;
      while (off < bytes.length) off += fs.writeSync(fd, bytes, off, bytes.length - off);
      ctx.fsync(fd);
    } finally {
      fs.closeSync(fd);
    }
    bestEffort(() => ctx.chown(tmp, GAME_UID, GAME_GID));
  } catch (e) {
    bestEffort(() => fs.unlinkSync(tmp));
    throw e;
  }
  return { path: tmp, sha256: createHash('sha256').update(bytes).digest('hex') };
}

/**
 * For content landing at a free name (a pull, a copy, a move: none of them ever replaces): there is no
 * value on disk to keep, so content for the root server.properties that holds a placeholder line
 * is refused. Null when it may land.
 */
export function freeLandingRefused(root: WorldRoot, dirFd: number, name: string, display: string, staged: string | number): Result | null {
  return landsOnProperties(root, dirFd, name) ? placeholderRefused(root, display, staged) : null;
}

/** The refusal of staged content (a path not followed, or an open file) that will be the root server.properties at a free name, when it holds a placeholder. */
export function placeholderRefused(root: WorldRoot, display: string, staged: string | number): Result | null {
  const st = typeof staged === 'number' ? fs.fstatSync(staged) : fs.lstatSync(staged, { throwIfNoEntry: false });
  if (!st?.isFile()) return null;
  const k = stagedValuesKept(root, display, staged);
  if (k === null) return null;
  // Values to keep would mean a file is there after all: refused rather than landed unkept.
  return Buffer.isBuffer(k) ? fail('redacted_value_unknown', `${display} holds ${REDACTED}, and nothing is on disk to take its value from; nothing was written`) : k;
}

/**
 * For an extraction staged in `newDir` (its tree mirrors the destination folder `destFd`): the entry
 * that lands where the root server.properties is keeps its values (the staged file is rewritten
 * before anything moves), or the extraction is refused. Null when it may go on.
 */
export function settleExtracted(ctx: OpContext, destFd: number, newDir: string): Result | null {
  const landing = ctx.root.landingPath(PROPERTIES_PATH);
  const base = canonicalRel(ctx.root.fd, destFd);
  if (landing === null || base === null) return null;
  const rel = base === '' ? landing : landing.startsWith(`${base}/`) ? landing.slice(base.length + 1) : null;
  if (rel === null) return null;
  const staged = `${newDir}/${rel}`;
  const st = fs.lstatSync(staged, { throwIfNoEntry: false });
  if (!st?.isFile()) return null;
  const k = stagedValuesKept(ctx.root, rel, staged);
  if (k === null) return null;
  if (!Buffer.isBuffer(k)) return { ...k, entry: rel };
  const w = writeWorking(ctx, path.dirname(staged), k, st.mode & 0o777);
  fs.renameSync(w.path, staged);
  return null;
}
