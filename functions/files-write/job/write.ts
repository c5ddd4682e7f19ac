/**
 * write(path, content, sha256, expect, createOnly): replaces or creates one regular file, atomically
 * through a temp file renamed over the target, so a reader sees the old bytes or the new, never a mix.
 * New content for the root server.properties keeps the values a read shows redacted (redacted-values.ts).
 *
 * @module
 */
import fs from 'node:fs';
import { valuesKept } from '../../../job/runtime/redacted-values.ts';
import { GAME_GID, GAME_UID, MAX_READ_BYTES, MAX_WRITE_BYTES, MAX_WRITE_LINK_HOPS, type OpContext, type OpRequestOf } from '../../../job/runtime/types.ts';
import { isEntry, isWithheldName, linkedEntry, linkedMessage } from '../../../job/runtime/withheld.ts';
import { sweepStale, TEMP_PREFIX } from '../../../job/runtime/working-files.ts';
import { replaceKeeping } from '../../../job/trash/replace.ts';
import { bestEffort, fail, failure, msg, writeFailure } from '../../../job/volume/failure.ts';
import { dir, join, leadsOutside } from '../../../job/volume/pathutil.ts';
import { readCapped, sha256Hex } from '../../../job/volume/read-capped.ts';
import { isNotExist, type Parent } from '../../../job/volume/root.ts';
import { newPathRefusal } from '../../../lib/protocol/names.ts';
import type { Result } from '../../../lib/protocol/result.ts';

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK } = fs.constants;

/** The experience config: it must be a regular file, never written through a link. */
export const EXPERIENCE_CONFIG = 'felis-experience.json';
const NEW_FILE_MODE = 0o644;

export interface Target {
  /** The directory that holds the final target, and its name there (never null). */
  parent: Parent;
  exists: boolean;
  mode: number;
  /** Links followed to reach the target. */
  hops: number;
}

function linkOutside(name: string, target: string): string {
  return `${name} is a symbolic link to ${target}, outside the server's files`;
}

/**
 * Step 3: the landing target. With create-only any entry at the name (even a dangling link) is
 * `exists`, checked before any link is followed. Otherwise links are followed, at most 8 hops, each
 * read and judged: absolute → bad_path; relative, joined to the link's directory and cleaned,
 * leading outside → bad_path. The final target is a regular file or nothing.
 */
export function resolveTarget(ctx: OpContext, name: string, createOnly: boolean): Target | Result {
  let cur = name;
  let hops = 0;
  for (;;) {
    let parent: Parent;
    try {
      parent = ctx.root.parentOf(cur, 'open');
    } catch (e) {
      // The caller's own path: its folder is what is missing (a write makes no folders). A link's
      // target keeps the plain "does not exist", naming only the caller's path.
      if (hops === 0 && isNotExist(e)) return fail('not_found', msg.folderMissing(dir(name)));
      return failure(name, e, 'open');
    }
    let keep = false;
    try {
      // The path names a directory itself ("", "config/", "a/.."): it exists, and it is no file.
      if (parent.name === null) return createOnly ? fail('exists', msg.exists(name)) : fail('bad_path', msg.isDir(name));
      let st: fs.BigIntStats | null = null;
      try {
        st = fs.lstatSync(parent.at(), { bigint: true });
      } catch (e) {
        if (!isNotExist(e)) return failure(name, e, 'lstat');
      }
      if (createOnly && st !== null) return fail('exists', msg.exists(name));
      if (st === null) {
        keep = true;
        return { parent, exists: false, mode: NEW_FILE_MODE, hops };
      }
      if (st.isSymbolicLink()) {
        let target: string;
        try {
          target = fs.readlinkSync(parent.at());
        } catch (e) {
          return failure(name, e, 'readlink');
        }
        hops++;
        if (hops > MAX_WRITE_LINK_HOPS) {
          return fail('bad_path', `${name} leads through more than ${MAX_WRITE_LINK_HOPS} symbolic links`);
        }
        if (target.startsWith('/')) return fail('bad_path', linkOutside(name, target));
        const next = join(dir(cur), target);
        if (leadsOutside(next)) return fail('bad_path', linkOutside(name, target));
        cur = next;
        continue;
      }
      if (st.isDirectory()) return fail('bad_path', msg.isDir(name));
      if (!st.isFile()) return fail('bad_path', msg.notRegular(name));
      // Replacing the withheld file while other links to it exist would leave its content at them.
      if (st.nlink > 1n && isEntry(linkedEntry(ctx.root), parent.fd, parent.name)) return fail('withheld_linked', linkedMessage(name));
      keep = true;
      return { parent, exists: true, mode: Number(st.mode & 0o777n), hops };
    } finally {
      if (!keep) parent.close();
    }
  }
}

/** `sha256` is the file as it is now; absent (Go's "") when it was deleted or is too large to hash. */
function conflict(name: string, what: string, sha256?: string): Result {
  const r: Result = { code: 'conflict', error: `${name} ${what} since it was opened; reload it, or save again to overwrite` };
  if (sha256) r.sha256 = sha256;
  return r;
}

/** Step 5: the current file must hash to `expect`. */
function checkExpect(t: Target, name: string, expect: string): Result | null {
  if (!t.exists) return conflict(name, 'was deleted');
  let fd: number;
  try {
    fd = fs.openSync(t.parent.at(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch (e) {
    if (isNotExist(e)) return conflict(name, 'was deleted');
    return failure(name, e, 'open');
  }
  try {
    const st = fs.fstatSync(fd, { bigint: true });
    if (!st.isFile() || st.size > BigInt(MAX_READ_BYTES)) return conflict(name, 'has changed');
    const raw = readCapped(fd, MAX_READ_BYTES + 1);
    if (raw.length > MAX_READ_BYTES) return conflict(name, 'has changed');
    const current = sha256Hex(raw);
    if (current !== expect) return conflict(name, 'has changed', current);
    return null;
  } catch (e) {
    return failure(name, e, 'read');
  } finally {
    fs.closeSync(fd);
  }
}

function writeAll(fd: number, b: Buffer): void {
  let off = 0;
  while (off < b.length) off += fs.writeSync(fd, b, off, b.length - off);
}

/** Step 6: temp file beside the target, written and synced, renamed over it. */
function land(ctx: OpContext, t: Target, name: string, content: Buffer, sum: string): Result {
  let rnd: Buffer;
  try {
    rnd = ctx.randomBytes(6);
    if (rnd.length !== 6) throw new Error(`got ${rnd.length} random bytes, not 6`);
  } catch (e) {
    return fail('bad_path', `cannot name a temporary file for ${name}: ${(e as Error).message}`);
  }
  const tmp = t.parent.at(TEMP_PREFIX + rnd.toString('hex'));
  let fd = -1;
  let created = false;
  let trashId: string | undefined;
  try {
    fd = fs.openSync(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, t.mode);
    created = true;
    fs.fchmodSync(fd, t.mode); // the umask may have narrowed the mode
    writeAll(fd, content);
    ctx.fsync(fd);
    const closing = fd;
    fd = -1;
    fs.closeSync(closing);
    // Without CHOWN the file stays root's, which the game can still read.
    bestEffort(() => ctx.chown(tmp, GAME_UID, GAME_GID));
    trashId = replaceKeeping(ctx, 'write', t.parent, tmp);
  } catch (e) {
    if (fd >= 0) {
      try {
        fs.closeSync(fd);
      } catch {
        // The write already failed; the close error adds nothing.
      }
    }
    if (created) {
      try {
        fs.unlinkSync(tmp);
      } catch {
        // Nothing more we can do; only this leaves a .felis-edit-* behind.
      }
    }
    return writeFailure(name, e, 'write');
  }
  bestEffort(() => ctx.fsync(t.parent.fd)); // the rename is done either way
  return trashId ? { sha256: sum, trash_id: trashId } : { sha256: sum };
}

export function write(ctx: OpContext, req: OpRequestOf<'write'>): Result {
  const name = req.path === '' ? '.' : req.path;
  const content = req.content ?? Buffer.alloc(0);
  const sum = sha256Hex(content);
  // 1. The content must be what the caller hashed. Nothing is touched otherwise.
  if (req.sha256 && req.sha256 !== sum) {
    return fail('digest_mismatch', `the content for ${name} does not match its sha256 ${req.sha256}; nothing was changed`);
  }
  // 2. Size.
  if (content.length > MAX_WRITE_BYTES) {
    return fail('too_large', `the content for ${name} is ${content.length} bytes; the editor writes at most ${MAX_WRITE_BYTES}`);
  }
  // A conditional write to the withheld file would answer whether a guess of its content is right
  // (or what its hash is); no caller can have read that hash, so the condition is refused.
  if ((req.expectSha256 || req.createOnly) && isWithheldName(ctx.root, name)) {
    return fail('bad_path', `${name} holds the proxy forwarding secret; it can only be overwritten, without expect_sha256 or create_only`);
  }
  // 3. Landing target.
  const t = resolveTarget(ctx, name, req.createOnly === true);
  if (!('parent' in t)) return t;
  try {
    // 4. The experience config must be a regular file.
    if (name === EXPERIENCE_CONFIG && t.hops > 0) {
      return fail('bad_path', `${name} is a symbolic link; the experience config must be a regular file`);
    }
    // 5. Precondition.
    if (req.expectSha256) {
      const c = checkExpect(t, name, req.expectSha256);
      if (c) return c;
    }
    // A new file's path is held to the name rule; an existing file keeps whatever name it has.
    const badName = t.exists ? undefined : newPathRefusal(name);
    if (badName) return fail('bad_path', badName);
    // 6. New content for the root server.properties keeps the values a read showed redacted.
    const landing = valuesKept(ctx.root, t.parent, name, content);
    if (!Buffer.isBuffer(landing)) return landing;
    // 7. Land (after clearing what dead Jobs left in this folder).
    sweepStale(t.parent.fd);
    return land(ctx, t, name, landing, landing === content ? sum : sha256Hex(landing));
  } finally {
    t.parent.close();
  }
}

export const runs = { write };
