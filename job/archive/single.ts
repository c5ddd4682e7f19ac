/**
 * A single compressed file (`.gz`, `.bz2`, `.xz`, `.zst`) is one entry named after the file
 * without its ending, judged like any entry name and against the target like any file of an
 * archive. Its size is not known up front (gzip's trailer keeps it mod 2^32, bzip2 has none), so
 * the space rule holds while it streams: the decoded bytes go into the working folder's `new/`
 * and stop with `no_space` as soon as they would pass the volume's free space, before anything
 * is placed; a zstd or xz file that states a larger size up front (`stated-size.ts`) is refused
 * the same way before any decoding. When the trash could give back room, the decoding goes on past
 * the free space without writing, up to that much more, so the refusal says how many bytes the file
 * needs (`need`): the op is run again after a purge only when it would then fit (trash/room.ts).
 * Progress counts compressed bytes read against the file's size.
 *
 * @module
 */
import fs from 'node:fs';
import { type ArchiveFormat, singleFileTarget } from '../../lib/files/archive-names.ts';
import type { Result } from '../../lib/protocol/result.ts';
import { GAME_GID, GAME_UID } from '../runtime/types.ts';
import { fail } from '../volume/failure.ts';
import { errCode } from '../volume/root.ts';
import { filledUp } from './extract.ts';
import { judgeEntry } from './names.ts';
import { OutOfRoom } from './open-pass.ts';
import type { TargetCheck } from './target.ts';
import { ArchiveReadError } from './zip-reader.ts';

const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW } = fs.constants;
const UNIX_MADE_BY = 3 << 8;
const FILE_MODE = 0o644;

export interface SingleJob {
  format: Extract<ArchiveFormat, 'gz' | 'bz2' | 'xz' | 'zst'>;
  /** The archive's root-relative name (its base name, less the ending, is the file's name). */
  name: string;
  archiveFd: number;
  /** The working folder's `new/` (a path). */
  newDir: string;
  check: TargetCheck;
  overwrite: boolean;
  /** Bytes the volume can take, or undefined when statfs cannot tell. */
  room: number | undefined;
  /**
   * Bytes the volume could take with all the trash holds given back (at least `room`): past `room`
   * the file is decoded on, written nowhere, up to this, so its `no_space` can say what it needs.
   */
  reach?: number;
  /** Space counted for the file itself on top of its bytes. */
  perItem: number;
  /** The longest path the file may have where it lands (names.ts `entryPathMax`). */
  pathMax: number;
  chown: (path: string, uid: number, gid: number) => void;
  progress: (done: number, total: number) => void;
}

/** The refusal; with `need` (the decoded bytes and `perItem` for the file) when its size is known. */
function outOfRoom(name: string, room: number, size?: { bytes: number; perItem: number }): Result {
  if (size === undefined) return { ...fail('no_space', `${name} decompresses to more than the ${room} bytes the server's volume has free; nothing was changed`), entry: name };
  const message = `${name} decompresses to ${size.bytes} bytes, more than the ${room} bytes the server's volume has free; nothing was changed`;
  return { ...fail('no_space', message), entry: name, need: size.bytes + size.perItem };
}

/** The decoded size the file states up front (zstd, xz), if it states one. */
async function statedSize(format: SingleJob['format'], fd: number): Promise<number | undefined> {
  if (format !== 'zst' && format !== 'xz') return undefined;
  const { xzStatedSize, zstdStatedSize } = await import('./stated-size.ts');
  return format === 'zst' ? zstdStatedSize(fd) : xzStatedSize(fd);
}

/** Stages the decoded file in `newDir`. Returns `{files: 1, bytes}` or the refusal. */
export async function stageSingle(job: SingleJob): Promise<Result> {
  const target = singleFileTarget(job.name);
  if (target === undefined) return fail('bad_path', `${job.name} is not a single compressed file`);
  const j = judgeEntry(Buffer.from(target, 'utf8'), UNIX_MADE_BY, 0, { kind: 'file', perm: FILE_MODE }, job.pathMax);
  if (j.action === 'refuse') return { code: j.code, error: j.error, entry: j.entry };
  if (j.action !== 'file') return { ...fail('archive_unsafe', `${target} cannot be a file name`), entry: target };
  job.check.visit(j.name, 'file');
  const refusal = job.check.outcome(job.overwrite);
  if (refusal) return refusal;

  const total = fs.fstatSync(job.archiveFd).size;
  let read = 0;
  const onRead = (n: number) => {
    read += n;
    job.progress(Math.min(read, total), total);
  };
  const limit = job.room === undefined ? undefined : job.room - job.perItem;
  const reachLimit = limit === undefined ? undefined : Math.max(limit, (job.reach ?? 0) - job.perItem);
  const stated = limit === undefined ? undefined : await statedSize(job.format, job.archiveFd);
  if (limit !== undefined && stated !== undefined && stated > limit) return outOfRoom(j.name, Math.max(0, limit), { bytes: stated, perItem: job.perItem });
  const path = `${job.newDir}/${j.name}`;
  const fd = fs.openSync(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, FILE_MODE);
  let bytes = 0;
  // Past the room: only counted, to learn the size, until it passes what the trash could add too.
  let counting = false;
  const write = (piece: Buffer) => {
    if (limit !== undefined && bytes + piece.length > limit) {
      if (bytes + piece.length > reachLimit!) throw new OutOfRoom(Math.max(0, limit));
      counting = true;
    }
    if (!counting) for (let off = 0; off < piece.length; ) off += fs.writeSync(fd, piece, off, piece.length - off);
    bytes += piece.length;
  };
  try {
    fs.fchmodSync(fd, FILE_MODE);
    job.progress(0, total);
    if (job.format === 'bz2') {
      await (await import('./bzip2.ts')).bunzip2(job.archiveFd, write, onRead);
    } else {
      const { openDecoded } = await import('./decoded.ts');
      const codec = job.format === 'gz' ? 'gzip' : job.format === 'xz' ? 'xz' : 'zstd';
      const stream = await openDecoded(codec, job.archiveFd, onRead);
      try {
        for await (const piece of stream) write(piece as Buffer);
      } finally {
        stream.destroy();
      }
    }
  } catch (e) {
    if (e instanceof OutOfRoom) return outOfRoom(j.name, e.room);
    const c = errCode(e);
    if (c === 'ENOSPC' || c === 'EDQUOT') return filledUp();
    if (e instanceof ArchiveReadError || c === undefined || c.startsWith('Z_') || c.startsWith('ERR_')) {
      return fail(
        'archive_invalid',
        `${job.name} is not a readable ${job.format === 'gz' ? 'gzip' : job.format === 'bz2' ? 'bzip2' : job.format === 'xz' ? 'xz' : 'zstd'} file: ${(e as Error).message}; nothing was changed`,
      );
    }
    throw e;
  } finally {
    fs.closeSync(fd);
  }
  if (counting) return outOfRoom(j.name, Math.max(0, limit!), { bytes, perItem: job.perItem });
  if (bytes === 0 && total === 0) return fail('archive_invalid', `${job.name} is empty; nothing was changed`);
  try {
    job.chown(path, GAME_UID, GAME_GID);
  } catch {
    // Best effort, as for every file the Job creates.
  }
  return { files: 1, bytes };
}
