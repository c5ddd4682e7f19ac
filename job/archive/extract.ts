/**
 * Pass 2: every entry streamed into the working folder's `new/`, in the order the pass gives them
 * (a tar's data can only be read front to back; a zip's is read where its central directory says). Files are
 * created exclusively (never through a link), their bytes counted against the declared size and
 * CRC-32 checked (when the format declares one) as they pass, then chowned to the
 * game's uid. Folders are created 0755 and chowned. Nothing here touches the world outside the
 * working folder; any refusal leaves it to be removed whole.
 *
 * @module
 */
import fs from 'node:fs';
import zlib from 'node:zlib';
import type { Result } from '../../lib/protocol/result.ts';
import { GAME_GID, GAME_UID } from '../runtime/types.ts';
import { fail } from '../volume/failure.ts';
import { dir } from '../volume/pathutil.ts';
import { errCode } from '../volume/root.ts';
import { decodeName, judgeEntry } from './names.ts';
import type { ArchivePass } from './pass.ts';
import { ArchiveReadError } from './zip-reader.ts';

const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW } = fs.constants;
const DIR_MODE = 0o755;
/** The folder cache is cleared past this many names or this many characters of them. */
const CACHE_NAMES = 4096;
const CACHE_BYTES = 256 << 10;

export interface ExtractHooks {
  chown: (path: string, uid: number, gid: number) => void;
  /** Called with bytes extracted so far and the total declared. */
  progress: (done: number, total: number) => void;
}

export const filledUp = () => fail('no_space', "the server's volume filled up while extracting; nothing was changed");

function isFull(e: unknown): boolean {
  const c = errCode(e);
  return c === 'ENOSPC' || c === 'EDQUOT';
}

class Damaged extends Error {}

/** A large entry starts its own writeback every this many bytes. */
const FLUSH_EVERY = 64 << 20;

/**
 * Starts the writeback of a large file while it is still being written: an fdatasync on the thread
 * pool every FLUSH_EVERY bytes, one at a time, so the disk works while the entry is inflated and
 * the volume's sync at the end finds little left to write (instead of a whole 1 GiB at once).
 * A failed flush fails the entry, as a failed write would.
 */
class Flusher {
  #pending: Promise<void> | undefined;
  #error: unknown;
  #since = 0;
  wrote(fd: number, bytes: number): void {
    if (this.#error !== undefined) throw this.#error;
    this.#since += bytes;
    if (this.#since < FLUSH_EVERY || this.#pending) return;
    this.#since = 0;
    this.#pending = new Promise<void>((resolve) =>
      fs.fdatasync(fd, (err) => {
        if (err) this.#error = err;
        this.#pending = undefined;
        resolve();
      }),
    );
  }
  /** Waits for the flush in flight; throws what a flush failed with. Resets for the next file. */
  async settle(): Promise<void> {
    if (this.#pending) await this.#pending;
    this.#since = 0;
    const err = this.#error;
    this.#error = undefined;
    if (err !== undefined) throw err;
  }
}

/**
 * Extracts into `newDir` (a path to the working folder's `new/`), judging every entry as the plan
 * did (the same `pathMax`). Returns null on success, or the refusal: a damaged entry
 * (`archive_invalid` with the entry) or a full volume (`no_space`). Other system errors propagate.
 */
export async function extractAll(pass: ArchivePass, newDir: string, total: number, pathMax: number, hooks: ExtractHooks): Promise<Result | null> {
  let done = 0;
  /** The entry being extracted, for a refusal's `entry`. */
  let current = '';
  /** Folders known to exist in new/ (a cache: a miss only costs an EEXIST), bounded in count and bytes. */
  const made = new Set<string>();
  let madeBytes = 0;
  const chown = (p: string) => {
    try {
      hooks.chown(p, GAME_UID, GAME_GID);
    } catch {
      // Best effort, as for every file the Job creates: a volume without ownership still works.
    }
  };
  /** Creates `folder` and its missing parents (relative to new/), each 0755 and chowned. */
  const makeDirs = (folder: string) => {
    if (folder === '.' || made.has(folder)) return;
    const parts = folder.split('/');
    for (let i = 1; i <= parts.length; i++) {
      const rel = parts.slice(0, i).join('/');
      if (made.has(rel)) continue;
      const p = rel;
      try {
        fs.mkdirSync(p, DIR_MODE);
      } catch (e) {
        if (errCode(e) === 'EEXIST') continue;
        throw e;
      }
      fs.chmodSync(p, DIR_MODE); // the umask may have taken bits away
      chown(p);
    }
    if (made.size >= CACHE_NAMES || madeBytes >= CACHE_BYTES) {
      made.clear();
      madeBytes = 0;
    }
    for (let i = 1; i <= parts.length; i++) {
      const rel = parts.slice(0, i).join('/');
      if (!made.has(rel)) madeBytes += rel.length;
      made.add(rel);
    }
  };

  const flusher = new Flusher();
  hooks.progress(0, total);
  // Work from inside new/: every path below is relative to it. A path through /proc/self/fd costs
  // a procfs lookup per open, which was the larger part of extracting small files. new/ is the
  // Job's own 0700 folder holding only folders and files it made, and names were judged clean.
  const previousCwd = safeCwd();
  process.chdir(newDir);
  try {
    for (let e = await pass.next(); e !== null; e = await pass.next()) {
      const j = judgeEntry(e.rawName, e.versionMadeBy, e.externalAttributes, e.typed, pathMax);
      current = decodeName(e.rawName).replaceAll('\\', '/');
      if (j.action === 'skip') continue;
      // The plan judged every entry of this same file; a refusal now means it changed underneath.
      if (j.action === 'refuse') throw new Damaged(`${current}\0the archive changed while it was being extracted`);
      if (j.action === 'dir') {
        makeDirs(j.name);
        continue;
      }
      makeDirs(dir(j.name));
      const entry = current;
      const p = j.name;
      const fd = fs.openSync(p, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, j.mode);
      try {
        fs.fchmodSync(fd, j.mode);
        // A tar declares no CRC-32: computing one anyway costs little and keeps this loop one shape.
        let crc = 0;
        let n = 0;
        try {
          const small = pass.readSmall(e);
          const data: AsyncIterable<Buffer> | Buffer[] = small ? [small] : ((await pass.openData(e)) as AsyncIterable<Buffer>);
          for await (const chunk of data) {
            // Never a byte past the declared size: the space check approved exactly that much.
            if (n + chunk.length > e.uncompressedSize) throw new Damaged(`${entry}\0it holds more than the ${e.uncompressedSize} bytes it declares`);
            crc = zlib.crc32(chunk, crc);
            n += chunk.length;
            for (let off = 0; off < chunk.length; ) off += fs.writeSync(fd, chunk, off, chunk.length - off);
            done += chunk.length;
            hooks.progress(done, total);
            if (!small) flusher.wrote(fd, chunk.length);
          }
          await flusher.settle();
        } catch (err) {
          if (err instanceof Damaged) throw err;
          if (err instanceof ArchiveReadError || !errCode(err) || errCode(err)?.startsWith('Z_')) {
            throw new Damaged(`${entry}\0${(err as Error).message}`);
          }
          throw err;
        }
        // yauzl already refused a count that differs; this also covers a reader that does not.
        if (n !== e.uncompressedSize) throw new Damaged(`${entry}\0it holds ${n} bytes, not the ${e.uncompressedSize} it declares`);
        if (e.crc32 !== undefined && crc >>> 0 !== e.crc32) {
          throw new Damaged(`${entry}\0its CRC-32 is ${hex(crc)}, not the ${hex(e.crc32)} it declares`);
        }
      } finally {
        await flusher.settle().catch(() => {}); // never close an fd a pending flush still uses
        fs.closeSync(fd);
      }
      chown(p);
    }
  } catch (err) {
    if (err instanceof Damaged) {
      const [entry, why] = err.message.split('\0');
      return { ...fail('archive_invalid', `${entry} in the archive is damaged: ${why}; nothing was changed`), entry };
    }
    if (err instanceof ArchiveReadError) {
      return fail('archive_invalid', `the archive is damaged: ${err.message}; nothing was changed`);
    }
    if (isFull(err)) return filledUp();
    const code = errCode(err);
    if (code !== undefined && /^E[A-Z0-9]+$/.test(code)) {
      // Any other system error is the entry's (a name too long for the volume, say): fail closed.
      return { ...fail('bad_path', `${current} could not be extracted (${code}: ${(err as Error).message}); nothing was changed`), entry: current };
    }
    throw err;
  } finally {
    process.chdir(previousCwd);
  }
  return null;
}

function safeCwd(): string {
  try {
    return process.cwd();
  } catch {
    return '/'; // the old working directory is gone: any existing one will do afterwards
  }
}

function hex(n: number): string {
  return (n >>> 0).toString(16).padStart(8, '0');
}

/**
 * Makes everything under `newDir` durable the slow way: every file and folder opened and fsynced.
 * Used when one `syncfs` of the volume is not available. ENOSPC/EDQUOT → `no_space`.
 */
export function fsyncTree(newDir: string, fsync: (fd: number) => void): Result | null {
  const visit = (p: string, isDir: boolean) => {
    if (isDir) {
      const d = fs.opendirSync(p);
      try {
        for (let ent = d.readSync(); ent; ent = d.readSync()) {
          if (ent.isDirectory()) visit(`${p}/${ent.name}`, true);
          else if (ent.isFile()) visit(`${p}/${ent.name}`, false);
        }
      } finally {
        d.closeSync();
      }
    }
    const fd = fs.openSync(p, fs.constants.O_RDONLY | O_NOFOLLOW);
    try {
      fsync(fd);
    } finally {
      fs.closeSync(fd);
    }
  };
  try {
    visit(newDir, true);
  } catch (e) {
    if (isFull(e)) return filledUp();
    throw e;
  }
  return null;
}
