/**
 * The zip reader: yauzl over an fd the caller opened beneath the world root, read lazily one
 * central-directory record at a time (so the entry count never costs memory), with names left as
 * raw bytes (we decode and judge them ourselves). yauzl checks each entry's inflated size against
 * the declared one; it does not check CRC-32, so the extractor does (`zlib.crc32`).
 *
 * Every failure of the reader is an `ArchiveReadError`: the archive, not the system, is at fault.
 *
 * @module
 */
import fs from 'node:fs';
import yauzl from 'yauzl';
import { fdPath } from '../root.ts';
import type { Readable } from 'node:stream';

export class ArchiveReadError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ArchiveReadError';
  }
}

/** The fields of a central directory record the Job uses. `rawName` is the undecoded name. */
export interface ZipEntry {
  rawName: Buffer;
  versionMadeBy: number;
  externalAttributes: number;
  compressedSize: number;
  uncompressedSize: number;
  crc32: number;
  localHeaderOffset: number;
  canDecode: boolean;
  /** The yauzl entry, to open its data. */
  readonly handle: yauzl.Entry;
}

function wrap(e: unknown): ArchiveReadError {
  return e instanceof ArchiveReadError ? e : new ArchiveReadError(e instanceof Error ? e.message : String(e), { cause: e });
}

/** One pass over an archive's central directory. Several may be opened over the same fd. */
export class ZipPass {
  readonly #zf: yauzl.ZipFile;
  private constructor(zf: yauzl.ZipFile) {
    this.#zf = zf;
  }

  /**
   * Opens a pass over the archive `fd` holds (left open: the caller owns it). yauzl closes the fd it
   * reads once the pass is closed, so each pass reads a fresh open of the same file (by object,
   * through /proc/self/fd, never by name).
   */
  static open(fd: number): Promise<ZipPass> {
    const own = fs.openSync(fdPath(fd), fs.constants.O_RDONLY);
    return new Promise((resolve, reject) => {
      yauzl.fromFd(
        own,
        { autoClose: false, lazyEntries: true, decodeStrings: false, validateEntrySizes: true, strictFileNames: false },
        (err, zf) => {
          if (!err) return resolve(new ZipPass(zf));
          fs.closeSync(own);
          reject(wrap(err));
        },
      );
    });
  }

  /** The entry count the end of central directory record declares. */
  get declaredEntries(): number {
    return this.#zf.entryCount;
  }

  /** The next entry, or null after the last one. */
  next(): Promise<ZipEntry | null> {
    const zf = this.#zf;
    return new Promise((resolve, reject) => {
      const done = () => {
        zf.removeListener('entry', onEntry);
        zf.removeListener('end', onEnd);
        zf.removeListener('error', onError);
      };
      const onEntry = (e: yauzl.Entry) => {
        done();
        resolve({
          rawName: e.fileName as unknown as Buffer,
          versionMadeBy: e.versionMadeBy,
          externalAttributes: e.externalFileAttributes >>> 0,
          compressedSize: e.compressedSize,
          uncompressedSize: e.uncompressedSize,
          crc32: e.crc32 >>> 0,
          localHeaderOffset: e.relativeOffsetOfLocalHeader,
          canDecode: e.canDecodeFileData(),
          handle: e,
        });
      };
      const onEnd = () => {
        done();
        resolve(null);
      };
      const onError = (err: Error) => {
        done();
        reject(wrap(err));
      };
      zf.on('entry', onEntry);
      zf.on('end', onEnd);
      zf.on('error', onError);
      zf.readEntry();
    });
  }

  /** The entry's data, inflated; the stream errors when the byte count differs from the declared. */
  openData(e: ZipEntry): Promise<Readable> {
    return new Promise((resolve, reject) => {
      this.#zf.openReadStream(e.handle, (err, stream) => (err ? reject(wrap(err)) : resolve(stream)));
    });
  }

  /** Ends the pass (the fd stays open). */
  close(): void {
    this.#zf.close();
  }
}
