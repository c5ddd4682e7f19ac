/**
 * upload(path, size, sha256, overwrite) fed by a byte stream: the Job side of a single upload. The
 * bytes go into a working file beside the target (`.felis-edit-<hex>`, a name the file routes never
 * list or address), hashed and counted as they arrive; only when exactly `size` bytes hashing to
 * `sha256` have arrived is the file synced, given to the game's user and renamed over the target.
 * Anything else removes the working file: the target is as it was, nothing is left behind.
 *
 * The target rules are the write's (links followed within the world, a folder is no file), with
 * "may exist" = overwrite; a new file gets 0644 and a replaced one keeps its mode.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { makeParents } from '../../functions/files-mkdir/job/mkdir.ts';
import { resolveTarget, type Target } from '../../functions/files-write/job/write.ts';
import { newPathRefusal } from '../../lib/protocol/names.ts';
import type { Result } from '../../lib/protocol/result.ts';
import { landsOnProperties, stagedValuesKept, writeWorking } from '../runtime/redacted-values.ts';
import { GAME_GID, GAME_UID, type OpContext } from '../runtime/types.ts';
import { pathHasWorkingName, reservedMessage, sweepStale, TEMP_PREFIX } from '../runtime/working-files.ts';
import { replaceKeeping } from '../trash/replace.ts';
import { freeBytes } from '../trash/room.ts';
import { bestEffort, fail, msg, writeFailure } from '../volume/failure.ts';
import { BlockWriter } from './batch.ts';

const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW } = fs.constants;

export interface UploadRequest {
  path: string;
  /** Exact byte count the body must have; with `upTo`, the most it may have. */
  size: number;
  /** The body's length is not known in advance (a form's part): `size` only bounds it, and the landing says how many bytes came. */
  upTo?: boolean;
  /** Lowercase hex SHA-256 the body must hash to; absent: computed and reported, not checked. */
  sha256?: string;
  overwrite: boolean;
  /** Create the missing folders of `path` first, each as mkdir would (`parents=true`). */
  parents?: boolean;
}

/**
 * A landing either ends with a Result (the upload placed, or refused as an op refuses: `exists`,
 * `bad_path`, `no_space`, …) or with a transfer error: the bytes were not what was promised, or the
 * stream broke. A transfer error is not a Result; the target is untouched either way.
 */
export type Landing = { kind: 'result'; result: Result; received?: number } | { kind: 'transfer'; reason: 'short' | 'long' | 'digest' | 'broken'; message: string };

export class TransferError extends Error {
  readonly reason: 'short' | 'long' | 'digest' | 'broken';
  constructor(reason: 'short' | 'long' | 'digest' | 'broken', message: string) {
    super(message);
    this.name = 'TransferError';
    this.reason = reason;
  }
}

function noSpace(name: string, size: number, avail: number): Result {
  return { ...fail('no_space', `${name} is ${size} bytes and the server's volume has ${avail} free; nothing was changed`), need: size, avail };
}

/**
 * Checks the target before any byte is read: a working name, a folder, an escape, an existing
 * entry without overwrite, or a size the volume cannot hold is a Result; else the open target.
 * With `parents`, the missing folders are made first (after the space check, so an upload the
 * volume cannot hold makes none); a refusal on the way is the upload's.
 */
export function uploadTarget(ctx: OpContext, req: UploadRequest): Target | Result {
  const name = req.path === '' ? '.' : req.path;
  if (pathHasWorkingName(req.path)) return fail('bad_path', reservedMessage(name));
  // What an upload names it may create, its folders too (parents=true): held to the name rule.
  const badName = newPathRefusal(req.path);
  if (badName) return fail('bad_path', badName);
  // A path ending in "/" or "/." names a folder, never a file: refused below, with no folder made.
  if (req.parents && !/(^|\/)\.?$/.test(req.path)) {
    const avail = freeBytes(ctx, req.size);
    if (avail !== undefined && req.size > avail) return noSpace(name, req.size, avail);
    const refused = makeParents(ctx, name);
    if (refused) return refused;
  }
  const t = resolveTarget(ctx, name, !req.overwrite);
  if (!('parent' in t) && t.code === 'exists') {
    // A folder is no file whatever overwrite says: report it as such rather than as "exists".
    const followed = resolveTarget(ctx, name, false);
    if (!('parent' in followed)) return followed.error === msg.isDir(name) ? followed : t;
    followed.parent.close();
    return t;
  }
  if (!('parent' in t)) return t;
  const avail = freeBytes(ctx, req.size);
  if (avail !== undefined && req.size > avail) {
    t.parent.close();
    return noSpace(name, req.size, avail);
  }
  return t;
}

/**
 * Streams `source` into place. Reads at most size+1 bytes (one more tells a long body), and keeps
 * no more than one chunk in memory: each write is awaited before the next chunk is pulled, so a
 * slow disk slows the sender (backpressure through the socket).
 */
export async function landUpload(ctx: OpContext, req: UploadRequest, source: AsyncIterable<Buffer>): Promise<Landing> {
  const name = req.path === '' ? '.' : req.path;
  const t = uploadTarget(ctx, req);
  if (!('parent' in t)) return { kind: 'result', result: t };
  try {
    sweepStale(t.parent.fd);
    const tmp = t.parent.at(TEMP_PREFIX + ctx.randomBytes(6).toString('hex'));
    let fh: fs.promises.FileHandle | undefined;
    let out: BlockWriter | undefined;
    try {
      fh = await fs.promises.open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, t.mode);
      await fh.chmod(t.mode); // the umask may have narrowed the mode
      const hash = createHash('sha256');
      out = new BlockWriter(fh, 0);
      try {
        const tooLong = req.upTo ? `${name} and the files before it are more than the ${req.size} bytes the upload may carry` : `the body of ${name} is longer than its ${req.size} bytes`;
        await out.receive(source, req.size, [hash], () => new TransferError('long', tooLong));
      } catch (e) {
        if (e instanceof TransferError || (e as NodeJS.ErrnoException).code === 'ENOSPC' || (e as NodeJS.ErrnoException).code === 'EDQUOT') throw e;
        throw new TransferError('broken', `the body of ${name} broke off after ${out.received} bytes: ${(e as Error).message}`);
      }
      if (!req.upTo && out.received !== req.size) throw new TransferError('short', `the upload ended before all ${req.size} bytes arrived (${out.received} did)`);
      const sum = hash.digest('hex');
      if (req.sha256 !== undefined && sum !== req.sha256) throw new TransferError('digest', `the ${req.size} bytes of ${name} hash to ${sum}, not ${req.sha256}; nothing was changed`);
      ctx.fsync(fh.fd);
      await fh.close();
      fh = undefined;
      // Without CHOWN the file stays root's, which the game can still read.
      bestEffort(() => ctx.chown(tmp, GAME_UID, GAME_GID));
      // New content for the root server.properties keeps the values a read showed redacted.
      let landing = tmp;
      let written = sum;
      if (landsOnProperties(ctx.root, t.parent.fd, t.parent.name)) {
        const kept = stagedValuesKept(ctx.root, name, tmp);
        if (kept !== null && !Buffer.isBuffer(kept)) {
          bestEffort(() => fs.unlinkSync(tmp));
          return { kind: 'result', result: kept };
        }
        if (kept !== null) {
          const w = writeWorking(ctx, t.parent.at(null), kept, t.mode);
          bestEffort(() => fs.unlinkSync(tmp));
          landing = w.path;
          written = w.sha256;
        }
      }
      let trashId: string | undefined;
      try {
        trashId = replaceKeeping(ctx, 'upload', t.parent, landing);
      } catch (e) {
        if (landing !== tmp) bestEffort(() => fs.unlinkSync(landing));
        throw e;
      }
      bestEffort(() => ctx.fsync(t.parent.fd)); // the rename is done either way
      const sent = written === sum ? {} : { content_sha256: sum };
      return { kind: 'result', result: { sha256: written, ...sent, ...(trashId ? { trash_id: trashId } : {}) }, ...(req.upTo ? { received: out.received } : {}) };
    } catch (e) {
      // Writes still on their way end before the descriptor closes and the file goes.
      await out?.settle();
      if (fh) await fh.close().catch(() => {});
      bestEffort(() => fs.unlinkSync(tmp));
      if (e instanceof TransferError) return { kind: 'transfer', reason: e.reason, message: e.message };
      return { kind: 'result', result: writeFailure(name, e, 'write') };
    }
  } finally {
    t.parent.close();
  }
}
