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
 * Every file of the session is opened through its folder's descriptor and checked to be the
 * session's own regular file (staging-folder.ts): something planted in or instead of the folder
 * ends the session with `upload_staging_tampered`, and nothing outside the folder is changed.
 *
 * @module
 */
import { createHash, type Hash } from 'node:crypto';
import fs from 'node:fs';
import type { Result } from '../../lib/protocol/result.ts';
import { DEFAULT_UPLOAD_CONFIG } from '../../lib/uploads/config.ts';
import { landsOnProperties, stagedValuesKept, writeWorking } from '../runtime/redacted-values.ts';
import { GAME_GID, GAME_UID, type OpContext } from '../runtime/types.ts';
import { isWorkingName, TEMP_PREFIX } from '../runtime/working-files.ts';
import { replaceKeeping } from '../trash/replace.ts';
import { bestEffort } from '../volume/failure.ts';
import { atPath, fdPath, type Identity, identityOf, sameIdentity } from '../volume/root.ts';
import { StagingFolder, StagingMissing, type StagingTerms } from '../volume/staging-folder.ts';
import { BlockWriter } from './batch.ts';
import { TransferError, uploadTarget } from './land.ts';

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
  /**
   * Epoch ms of the last begin or accepted part: the session's idle period runs from it, for its
   * receiver and for any sweeper alike; a folder untouched past the idle period is stale.
   */
  touched: number;
  /**
   * The session's idle period, as its receiver was told: any sweeper (a later receiver, any
   * mutation) judges the folder by the same period the session's own receiver would have.
   */
  idle_ms?: number;
  /** Begun with `parents=true`: the commit makes the target's missing folders again, should they have gone. */
  parents?: true;
}

/** The idle period of a session that did not record one (begun before sessions did): the receivers' default. */
export const DEFAULT_SESSION_IDLE_MS = DEFAULT_UPLOAD_CONFIG.idleSeconds * 1000;
/** About 180,000 parts: a larger state is none of ours. */
const MAX_STATE_BYTES = 16 << 20;

/** Something on the world volume is not what the session left there: the session ends. */
export class StagingTampered extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StagingTampered';
  }
}

/** How the staging folder's refusals name an upload's folder and files; they end the session. */
const UPLOAD_STAGING: StagingTerms = { folder: "the upload's staging folder", file: (name) => `the upload's ${name}`, notOurs: StagingTampered };

/**
 * A session's state from its open folder, or undefined when there is none or it is not ours
 * (unreadable JSON). A link, a hard link, a special file or an oversized file at the state's name
 * is tampering (StagingTampered): it is never followed, and never read whole.
 */
function readState(folder: StagingFolder): SessionState | undefined {
  const raw = folder.readSmall(STATE, MAX_STATE_BYTES);
  if (raw === undefined) return undefined;
  try {
    const s = JSON.parse(raw.toString('utf8')) as SessionState;
    return s && typeof s === 'object' && typeof s.touched === 'number' ? s : undefined;
  } catch {
    return undefined;
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
export const TAMPERED = 'upload_staging_tampered';
const tampered = (e: StagingTampered) =>
  new SessionError(409, TAMPERED, `${e.message}: something on the world volume changed the upload's staging folder, so the upload was dropped; nothing was placed`);

export class UploadSession {
  /** The staging folder's name at the world root. */
  readonly name: string;
  state: SessionState;
  #hash: Hash;
  /** The staging folder and its `data`, as this session made or found them: nothing else is used. */
  readonly #folderId: Identity;
  readonly #dataId: Identity;
  busy = false;

  private constructor(name: string, state: SessionState, hash: Hash, folderId: Identity, dataId: Identity) {
    this.name = name;
    this.state = state;
    this.#hash = hash;
    this.#folderId = folderId;
    this.#dataId = dataId;
  }

  /**
   * Begins a session: the path must name a file the upload could land at (a folder, an escape, a
   * working name are `bad_path`), and the volume must have room for `size` now (507 otherwise).
   * With `parents`, the path's missing folders are made now, each as mkdir would.
   */
  static begin(ctx: OpContext, id: string, path: string, size: number, o: { idleMs?: number; now?: number; parents?: boolean } = {}): UploadSession {
    const now = o.now ?? Date.now();
    const name = stagingName(id);
    if (fs.lstatSync(atPath(ctx.root.fd, name), { throwIfNoEntry: false })) return UploadSession.open(ctx, id);
    const t = uploadTarget(ctx, { path, size, sha256: '', overwrite: true, ...(o.parents ? { parents: true } : {}) });
    if (!('parent' in t)) {
      if (t.code === 'no_space') throw new SessionError(507, 'upload_staging_full', t.error ?? 'no room for the upload');
      throw new SessionError(t.code === 'not_found' ? 404 : 400, t.code === 'not_found' ? 'not_found' : 'bad_path', t.error ?? 'the path must name a file inside the world folder');
    }
    t.parent.close();
    const folder = StagingFolder.create(ctx.root.fd, name, UPLOAD_STAGING);
    try {
      const fd = folder.createFile(DATA);
      let dataId: Identity;
      try {
        dataId = identityOf(fs.fstatSync(fd, { bigint: true }));
      } finally {
        fs.closeSync(fd);
      }
      const state: SessionState = { id, path, size, received: 0, parts: [], touched: now, ...(o.idleMs ? { idle_ms: o.idleMs } : {}), ...(o.parents ? { parents: true as const } : {}) };
      folder.replace(STATE, JSON.stringify(state));
      return new UploadSession(name, state, createHash('sha256'), folder.identity, dataId);
    } catch (e) {
      bestEffort(() => folder.removeAll());
      if (e instanceof StagingTampered) throw tampered(e);
      throw e;
    } finally {
      folder.close();
    }
  }

  /**
   * Opens the session from the disk, rebuilding its running hash from the bytes it holds. A
   * staging folder that is not as a session leaves it is tampering: what is ours of it is removed
   * (never following a link) and the session is refused.
   */
  static open(ctx: OpContext, id: string): UploadSession {
    const name = stagingName(id);
    let folder: StagingFolder;
    try {
      folder = StagingFolder.open(ctx.root.fd, name, UPLOAD_STAGING);
    } catch (e) {
      if (e instanceof StagingMissing) throw notFound();
      if (e instanceof StagingTampered) throw tampered(e);
      throw e;
    }
    try {
      const state = readState(folder);
      if (!state || state.id !== id) throw notFound();
      const { fd, st } = folder.openFile(DATA, fs.constants.O_RDWR);
      const hash = createHash('sha256');
      try {
        // A part written but not recorded (the Pod died between the two) is not part of the session.
        if (st.size < BigInt(state.received)) throw new StagingTampered("the upload's data is shorter than its state records");
        fs.ftruncateSync(fd, state.received);
        const buf = Buffer.allocUnsafe(1 << 20);
        for (let off = 0; off < state.received; ) {
          const n = fs.readSync(fd, buf, 0, Math.min(buf.length, state.received - off), off);
          if (n === 0) throw new StagingTampered("the upload's data is shorter than its state records");
          hash.update(buf.subarray(0, n));
          off += n;
        }
      } finally {
        fs.closeSync(fd);
      }
      return new UploadSession(name, state, hash, folder.identity, identityOf(st));
    } catch (e) {
      if (!(e instanceof StagingTampered)) throw e;
      bestEffort(() => folder.removeAll());
      throw tampered(e);
    } finally {
      folder.close();
    }
  }

  /**
   * Runs `fn` with the session's own staging folder open. Tampering found on the way ends the
   * session: what is still verifiably ours is removed and the call refused (409
   * `upload_staging_tampered`).
   */
  async #within<T>(ctx: OpContext, fn: (folder: StagingFolder) => T | Promise<T>): Promise<T> {
    let folder: StagingFolder;
    try {
      folder = StagingFolder.open(ctx.root.fd, this.name, UPLOAD_STAGING, this.#folderId);
    } catch (e) {
      if (e instanceof StagingTampered) throw tampered(e);
      throw e;
    }
    try {
      return await fn(folder);
    } catch (e) {
      if (!(e instanceof StagingTampered)) throw e;
      bestEffort(() => folder.removeAll());
      throw tampered(e);
    } finally {
      folder.close();
    }
  }

  /**
   * Appends one part at `offset`, checked in this order: offset, length, body length, digest. A
   * refused part leaves the data and the running hash as they were.
   */
  async append(ctx: OpContext, offset: number, length: number, sha256: string, body: AsyncIterable<Buffer>, now = Date.now()): Promise<void> {
    const s = this.state;
    if (offset !== s.received) throw new SessionError(409, 'upload_offset_mismatch', `the upload holds ${s.received} bytes; send the part that starts there`);
    if (length < 0 || length > PART_MAX_BYTES || s.received + length > s.size) {
      throw new SessionError(413, 'part_too_large', `a part is at most ${PART_MAX_BYTES} bytes and may not go past the upload's ${s.size} bytes`);
    }
    await this.#within(ctx, async (folder) => {
      const fh = await folder.openHandle(DATA, this.#dataId);
      const saved = this.#hash.copy();
      const part = createHash('sha256');
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
        folder.replace(STATE, JSON.stringify(next));
        this.state = next;
      } catch (e) {
        this.#hash = saved;
        await out.settle();
        await fh.truncate(offset).catch(() => {});
        throw e;
      } finally {
        await fh.close().catch(() => {});
      }
    });
  }

  /**
   * Places the file: all bytes there, the whole digest right (when the caller gives one), the
   * target rules of an upload (`exists` without overwrite). What is renamed into place is the
   * session's own `data`, checked by name right before the rename and at the target right after.
   * Then the staging folder goes.
   */
  async commit(ctx: OpContext, overwrite: boolean, expectSha256?: string): Promise<Result> {
    const s = this.state;
    if (s.received !== s.size) throw new SessionError(409, 'upload_incomplete', `the upload holds ${s.received} of its ${s.size} bytes`);
    const sum = this.#hash.copy().digest('hex');
    if (expectSha256 !== undefined && expectSha256 !== sum) throw new SessionError(400, 'digest_mismatch', `the uploaded bytes hash to ${sum}, not ${expectSha256}; nothing was changed`);
    let trashId: string | undefined;
    let written = sum;
    return this.#within(ctx, (folder) => {
      const { fd, st } = folder.openFile(DATA, fs.constants.O_RDWR, { expect: this.#dataId });
      try {
        if (st.size !== BigInt(s.size)) throw new StagingTampered(`the upload's data is ${st.size} bytes, not the ${s.size} received`);
        // Room is already taken: the bytes are on the volume. Only the target rules are checked.
        const t = uploadTarget(
          { ...ctx, statfs: () => ({ bavail: BigInt(Number.MAX_SAFE_INTEGER), bsize: 1n }) },
          { path: s.path, size: s.size, sha256: sum, overwrite, ...(s.parents ? { parents: true } : {}) },
        );
        if (!('parent' in t)) return t;
        try {
          fs.fchmodSync(fd, t.mode);
          // Without CHOWN the file stays the Job's, which the game can still read.
          bestEffort(() => fs.fchownSync(fd, GAME_UID, GAME_GID));
          folder.stillIs(DATA, fd);
          // New content for the root server.properties keeps the values a read showed redacted: those
          // bytes land from a working file beside the target, and the session's data is left as it is.
          const kept = landsOnProperties(ctx.root, t.parent.fd, t.parent.name) ? stagedValuesKept(ctx.root, s.path, folder.at(DATA)) : null;
          if (kept !== null && !Buffer.isBuffer(kept)) return kept;
          const from = kept === null ? { path: folder.at(DATA), sha256: sum } : writeWorking(ctx, t.parent.at(null), kept, t.mode);
          const fromId = kept === null ? this.#dataId : identityOf(fs.lstatSync(from.path, { bigint: true }));
          try {
            trashId = replaceKeeping(ctx, 'upload', t.parent, from.path);
          } catch (e) {
            if (kept !== null) bestEffort(() => fs.unlinkSync(from.path));
            throw e;
          }
          const placed = fs.lstatSync(t.parent.at(), { bigint: true, throwIfNoEntry: false });
          if (!placed?.isFile() || !sameIdentity(identityOf(placed), fromId)) throw new StagingTampered("the upload's data was swapped while it was placed");
          bestEffort(() => ctx.fsync(t.parent.fd));
          written = from.sha256;
        } finally {
          t.parent.close();
        }
      } finally {
        fs.closeSync(fd);
      }
      // Placed: a folder left behind is swept later, and must not turn the commit into a failure.
      bestEffort(() => folder.removeAll());
      return { sha256: written, files: 1, bytes: s.size, ...(trashId ? { trash_id: trashId } : {}) };
    });
  }

  /** Removes the staging folder, when it still is this session's (anything else is left alone). */
  remove(ctx: OpContext): void {
    let folder: StagingFolder;
    try {
      folder = StagingFolder.open(ctx.root.fd, this.name, UPLOAD_STAGING, this.#folderId);
    } catch {
      return;
    }
    try {
      folder.removeAll();
    } finally {
      folder.close();
    }
  }
}

/** A staging folder's name: the editor's kind of working name, `.felis-edit-<12 hex>` (a folder). */
export function isStagingName(name: string): boolean {
  return name.startsWith(TEMP_PREFIX) && isWorkingName(name);
}

/**
 * How long past its idle period a session's folder is still left to its receiver: that receiver
 * ends (and removes it) at the period's end by its own clock, which may run behind the sweeper's
 * when the two Pods are on different nodes.
 */
export const SWEEP_MARGIN_MS = 60_000;

/**
 * Removes the staging folders of sessions nobody touched for their idle period (the one they
 * recorded, else `idleMs`) and a minute more: their receiver was lost and nobody came back in time,
 * so the bytes are abandoned, as the receiver itself would have found. Never `keep`. Only folders of
 * ours (never links) at the root that hold a readable session state are considered; anything else
 * stays. A session's receiver holds nothing, so changes run while a session is live: what keeps a
 * live one is that its receiver lives exactly as long as its idle period, counted from the same
 * `touched` (its last begin or accepted part; job/serve/receive-session.ts), and the sweeper runs
 * inside a call holding the world, never beside one of the session's own calls.
 */
export function sweepStaleSessions(ctx: OpContext, idleMs: number, keep?: string, now = Date.now()): number {
  let removed = 0;
  const rootFd = ctx.root.fd;
  bestEffort(() => {
    for (const name of fs.readdirSync(fdPath(rootFd))) {
      if (!isStagingName(name) || name === keep) continue;
      bestEffort(() => {
        const st = fs.lstatSync(atPath(rootFd, name));
        if (!st.isDirectory()) return;
        const folder = StagingFolder.open(rootFd, name, UPLOAD_STAGING);
        try {
          const s = readState(folder);
          if (!s) return;
          const idle = typeof s.idle_ms === 'number' && s.idle_ms > 0 ? s.idle_ms : idleMs;
          if (now - s.touched < idle + SWEEP_MARGIN_MS) return;
          folder.removeAll();
          removed++;
        } finally {
          folder.close();
        }
      });
    }
  });
  return removed;
}
