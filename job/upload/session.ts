/**
 * An upload session on the world volume: its bytes and its state live in a hidden staging folder
 * at the world's root, `.felis-edit-<12 hex of sha256(id)>` (a working name: listings skip it, no
 * file op addresses it, zip never packs it), so a receiver that is lost mid-session is replaced by
 * one that picks up from the disk. Inside: `data` (the bytes received so far) and `state.json`
 * (`{id, path, size, received, parts, touched, idle_ms}`), replaced atomically after each part.
 *
 * A part is written at the end of `data` while it is hashed twice (the part, and the running hash of
 * the whole file); a part whose length or digest is wrong is cut off again (truncate back) and the
 * running hash restored from its copy, so a resend works. The running hash is rebuilt from `data`
 * when a receiver opens an existing session. Commit compares the whole file's SHA-256 (to the
 * caller's, when given), then renames `data` over the target: the same volume, no second copy.
 *
 * @module
 */
import { createHash, type Hash } from 'node:crypto';
import fs from 'node:fs';
import type { Result } from '../../lib/protocol/result.ts';
import { bestEffort } from '../failure.ts';
import { GAME_GID, GAME_UID, type OpContext } from '../types.ts';
import { TEMP_PREFIX } from '../working-files.ts';
import { TransferError, uploadTarget } from './land.ts';
import { BlockWriter } from './batch.ts';
import { DEFAULT_UPLOAD_CONFIG } from '../../lib/uploads/config.ts';

export const PART_MAX_BYTES = 32 << 20;
const STATE = 'state.json';
const DATA = 'data';

export interface PartInfo {
  size: number;
  sha256: string;
}

export interface SessionState {
  id: string;
  path: string;
  size: number;
  received: number;
  parts: PartInfo[];
  /** Epoch ms of the last begin or part: a folder untouched past the idle period is stale. */
  touched: number;
  /**
   * The session's idle period, as its receiver was told: any sweeper (a later receiver, any
   * mutation) judges the folder by the same period the session's own receiver would have.
   */
  idle_ms?: number;
}

/** The idle period of a session that did not record one (begun before sessions did): the receivers' default. */
export const DEFAULT_SESSION_IDLE_MS = DEFAULT_UPLOAD_CONFIG.idleSeconds * 1000;
/** About 180,000 parts: a larger state is none of ours. */
const MAX_STATE_BYTES = 16 << 20;

/**
 * A session's state from its folder, or undefined. The world is hostile: a link, a special file
 * or an oversized file at the state's name is no state, and is never followed or read whole.
 */
function readState(dir: string): SessionState | undefined {
  let fd: number;
  try {
    fd = fs.openSync(`${dir}/${STATE}`, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile() || st.size > MAX_STATE_BYTES) return undefined;
    const s = JSON.parse(fs.readFileSync(fd, 'utf8')) as SessionState;
    return s && typeof s === 'object' && typeof s.touched === 'number' ? s : undefined;
  } catch {
    return undefined;
  } finally {
    fs.closeSync(fd);
  }
}

/** The session view the routes answer; nothing else. */
export function viewOf(s: SessionState): object {
  return { id: s.id, path: s.path, size: s.size, received: s.received, part_max_bytes: PART_MAX_BYTES, parts: s.parts.map((p) => ({ size: p.size, sha256: p.sha256 })) };
}

export function stagingName(id: string): string {
  return TEMP_PREFIX + createHash('sha256').update(id).digest('hex').slice(0, 12);
}

/** A refusal of a session call: its HTTP status and the envelope code the function passes on. */
export class SessionError extends Error {
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.name = 'SessionError';
    this.status = status;
    this.code = code;
  }
}

const notFound = () => new SessionError(404, 'upload_not_found', 'no such upload session');

export class UploadSession {
  readonly dir: string;
  state: SessionState;
  #hash: Hash;
  busy = false;

  private constructor(dir: string, state: SessionState, hash: Hash) {
    this.dir = dir;
    this.state = state;
    this.#hash = hash;
  }

  /**
   * The session's folder, a direct child of the root (the mount itself, trusted); kept as a path
   * because the session outlives each call's open root. Checked to be a folder, never a link.
   */
  static folder(ctx: OpContext, id: string): string {
    return `${ctx.root.dir}/${stagingName(id)}`;
  }

  /**
   * Begins a session: the path must name a file the upload could land at (a folder, an escape, a
   * working name are `bad_path`), and the volume must have room for `size` now (507 otherwise).
   */
  static begin(ctx: OpContext, id: string, path: string, size: number, o: { idleMs?: number; now?: number } = {}): UploadSession {
    const now = o.now ?? Date.now();
    const dir = UploadSession.folder(ctx, id);
    if (isFolder(dir)) return UploadSession.open(ctx, id);
    const t = uploadTarget(ctx, { path, size, sha256: '', overwrite: true });
    if (!('parent' in t)) {
      if (t.code === 'no_space') throw new SessionError(507, 'upload_staging_full', t.error ?? 'no room for the upload');
      throw new SessionError(t.code === 'not_found' ? 404 : 400, t.code === 'not_found' ? 'not_found' : 'bad_path', t.error ?? 'the path must name a file inside the world folder');
    }
    t.parent.close();
    fs.mkdirSync(dir, { mode: 0o700 });
    try {
      fs.writeFileSync(`${dir}/${DATA}`, Buffer.alloc(0), { mode: 0o600, flag: 'wx' });
      const state: SessionState = { id, path, size, received: 0, parts: [], touched: now, ...(o.idleMs ? { idle_ms: o.idleMs } : {}) };
      writeState(dir, state);
      return new UploadSession(dir, state, createHash('sha256'));
    } catch (e) {
      fs.rmSync(dir, { recursive: true, force: true });
      throw e;
    }
  }

  /** Opens the session from the disk, rebuilding its running hash from the bytes it holds. */
  static open(ctx: OpContext, id: string): UploadSession {
    const dir = UploadSession.folder(ctx, id);
    // The world is hostile: a link at the staging name is not our folder.
    if (!isFolder(dir)) throw notFound();
    const state = readState(dir);
    if (!state || state.id !== id) throw notFound();
    // A part written but not recorded (the Pod died between the two) is not part of the session.
    fs.truncateSync(`${dir}/${DATA}`, state.received);
    const hash = createHash('sha256');
    const fd = fs.openSync(`${dir}/${DATA}`, 'r');
    try {
      const buf = Buffer.allocUnsafe(1 << 20);
      for (let off = 0; off < state.received; ) {
        const n = fs.readSync(fd, buf, 0, Math.min(buf.length, state.received - off), off);
        if (n === 0) throw new Error(`staged data of session ${id} is shorter than recorded`);
        hash.update(buf.subarray(0, n));
        off += n;
      }
    } finally {
      fs.closeSync(fd);
    }
    return new UploadSession(dir, state, hash);
  }

  /**
   * Appends one part at `offset`, checked in this order: offset, length, body length, digest. A
   * refused part leaves the data and the running hash as they were.
   */
  async append(offset: number, length: number, sha256: string, body: AsyncIterable<Buffer>, now = Date.now()): Promise<void> {
    const s = this.state;
    if (offset !== s.received) throw new SessionError(409, 'upload_offset_mismatch', `the upload holds ${s.received} bytes; send the part that starts there`);
    if (length < 0 || length > PART_MAX_BYTES || s.received + length > s.size) {
      throw new SessionError(413, 'part_too_large', `a part is at most ${PART_MAX_BYTES} bytes and may not go past the upload's ${s.size} bytes`);
    }
    const saved = this.#hash.copy();
    const part = createHash('sha256');
    const fh = await fs.promises.open(`${this.dir}/${DATA}`, 'r+');
    const out = new BlockWriter(fh, offset);
    try {
      try {
        await out.receive(body, length, [part, this.#hash], () => new TransferError('long', 'the part is longer than its Content-Length'));
      } catch (e) {
        if (e instanceof TransferError) throw e;
        const code = (e as NodeJS.ErrnoException).code;
        if (code === 'ENOSPC' || code === 'EDQUOT') throw new SessionError(507, 'upload_staging_full', "the server's volume filled up; the part was not kept");
        throw new TransferError('broken', `the part broke off after ${out.received} bytes`);
      }
      if (out.received !== length) throw new TransferError('short', `the part ended before all ${length} bytes arrived`);
      const sum = part.digest('hex');
      if (sum !== sha256) throw new TransferError('digest', 'the part does not match its Content-Digest; it was not kept');
      await fh.sync();
      const next: SessionState = { ...s, received: s.received + length, parts: [...s.parts, { size: length, sha256: sum }], touched: now };
      writeState(this.dir, next);
      this.state = next;
    } catch (e) {
      this.#hash = saved;
      await out.settle();
      await fh.truncate(offset).catch(() => {});
      throw e;
    } finally {
      await fh.close().catch(() => {});
    }
  }

  /**
   * Places the file: all bytes there, the whole digest right (when the caller gives one), the
   * target rules of an upload (`exists` without overwrite). Then the staging folder goes.
   */
  commit(ctx: OpContext, overwrite: boolean, expectSha256?: string): Result {
    const s = this.state;
    if (s.received !== s.size) throw new SessionError(409, 'upload_incomplete', `the upload holds ${s.received} of its ${s.size} bytes`);
    const sum = this.#hash.copy().digest('hex');
    if (expectSha256 !== undefined && expectSha256 !== sum) throw new SessionError(400, 'digest_mismatch', `the uploaded bytes hash to ${sum}, not ${expectSha256}; nothing was changed`);
    // Room is already taken: the bytes are on the volume. Only the target rules are checked.
    const t = uploadTarget({ ...ctx, statfs: () => ({ bavail: BigInt(Number.MAX_SAFE_INTEGER), bsize: 1n }) }, { path: s.path, size: s.size, sha256: sum, overwrite });
    if (!('parent' in t)) return t;
    try {
      const data = `${this.dir}/${DATA}`;
      fs.chmodSync(data, t.mode);
      bestEffort(() => ctx.chown(data, GAME_UID, GAME_GID));
      fs.renameSync(data, t.parent.at());
      bestEffort(() => ctx.fsync(t.parent.fd));
    } finally {
      t.parent.close();
    }
    this.remove();
    return { sha256: sum, files: 1, bytes: s.size };
  }

  remove(): void {
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

function isFolder(p: string): boolean {
  try {
    return fs.lstatSync(p).isDirectory();
  } catch {
    return false;
  }
}

function writeState(dir: string, s: SessionState): void {
  const tmp = `${dir}/${STATE}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(s), { mode: 0o600 });
  fs.renameSync(tmp, `${dir}/${STATE}`);
}

/**
 * Removes the staging folders of sessions nobody touched for their idle period (the one they
 * recorded, else `idleMs`): their receiver was lost and nobody came back in time, so the bytes are
 * abandoned, as the receiver itself would have found. Never `keep`. Only folders (never links) at
 * the root that hold a readable session state are considered; anything else stays. A session
 * cannot be live meanwhile: its receiver holds the world, and so does whoever sweeps.
 */
export function sweepStaleSessions(ctx: OpContext, idleMs: number, keep?: string, now = Date.now()): number {
  let removed = 0;
  const root = ctx.root.dir;
  bestEffort(() => {
    for (const name of fs.readdirSync(root)) {
      if (!name.startsWith(TEMP_PREFIX) || name === keep) continue;
      bestEffort(() => {
        const st = fs.lstatSync(`${root}/${name}`);
        if (!st.isDirectory()) return;
        const s = readState(`${root}/${name}`);
        if (!s) return;
        const idle = typeof s.idle_ms === 'number' && s.idle_ms > 0 ? s.idle_ms : idleMs;
        if (now - s.touched < idle) return;
        fs.rmSync(`${root}/${name}`, { recursive: true, force: true });
        removed++;
      });
    }
  });
  return removed;
}
