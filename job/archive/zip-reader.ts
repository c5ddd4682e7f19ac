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
import { PassThrough, pipeline, type Readable } from 'node:stream';
import zlib from 'node:zlib';
import yauzl from 'yauzl';
import { fdPath } from '../volume/root.ts';
import type { ArchiveEntry, ArchivePass } from './pass.ts';

export class ArchiveReadError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ArchiveReadError';
  }
}

/** The fields of a central directory record the Job uses. `rawName` is the undecoded name. */
export interface ZipEntry extends ArchiveEntry {
  crc32: number;
  /** The yauzl entry, to open its data. */
  readonly handle: yauzl.Entry;
}

/** Reads of at most this size are served from one cached window of the file. */
const WINDOW = 256 << 10;
/** Entry data up to this size is read at once instead of through a file stream. */
const SMALL_DATA = 256 << 10;
/** A local file header's fixed part, and its signature. */
const LOCAL_HEADER = 30;
const LOCAL_SIG = 0x04034b50;
/** Larger entries are read and inflated in pieces of this size. */
const DATA_CHUNK = 256 << 10;

interface Window {
  start: number;
  len: number;
  buf: Buffer;
}

/**
 * yauzl's reader over our fd. yauzl reads each central directory record with two small reads;
 * through the thread pool that costs more than the rest of the work, so small reads are served
 * from two 256 KiB windows read synchronously (the central directory is read front to back), and small
 * entries' data is read in one go. Large data streams from the file as usual.
 */
class WindowReader extends yauzl.RandomAccessReader {
  readonly #fd: number;
  #closed = false;
  /**
   * Two windows, allocated once and refilled in place (a fresh 256 KiB buffer per miss was
   * external garbage the GC only collected under pressure: tens of MiB at a million entries).
   * `#wins[0]` is the most recently used; a miss refills the other one.
   */
  #wins: Window[] = [];
  constructor(fd: number) {
    super();
    this.#fd = fd;
  }
  #readAt(buffer: Buffer, offset: number, length: number, position: number): number {
    if (length <= WINDOW) {
      // The central directory and the entry data are read in two places of the file, alternately.
      const wins = this.#wins;
      const fits = (x: Window | undefined) => x !== undefined && position >= x.start && position + length <= x.start + x.len;
      let w: Window;
      if (fits(wins[0])) {
        w = wins[0];
      } else if (fits(wins[1])) {
        w = wins[1];
        wins[1] = wins[0];
        wins[0] = w;
      } else {
        w = wins.length < 2 ? { start: 0, len: 0, buf: Buffer.allocUnsafe(WINDOW) } : wins[1];
        w.len = 0; // empty until the read succeeds
        w.start = position;
        w.len = fs.readSync(this.#fd, w.buf, 0, WINDOW, position);
        if (wins.length < 2) wins.unshift(w);
        else {
          wins[1] = wins[0];
          wins[0] = w;
        }
        if (w.len < length) {
          w.buf.copy(buffer, offset, 0, w.len);
          return w.len;
        }
      }
      const from = position - w.start;
      w.buf.copy(buffer, offset, from, from + length);
      return length;
    }
    let got = 0;
    while (got < length) {
      const n = fs.readSync(this.#fd, buffer, offset + got, length - got, position + got);
      if (n === 0) break;
      got += n;
    }
    return got;
  }
  /** Reads `length` bytes at `position` now; fewer only at the end of the file. */
  readNow(buffer: Buffer, offset: number, length: number, position: number): number {
    return this.#readAt(buffer, offset, length, position);
  }
  override read(buffer: Buffer, offset: number, length: number, position: number, callback: (err: Error | null) => void): void {
    let err: Error | null = null;
    try {
      if (this.#readAt(buffer, offset, length, position) < length) err = new Error('unexpected EOF');
    } catch (e) {
      err = e as Error;
    }
    process.nextTick(callback, err);
  }
  override _readStreamForRange(start: number, end: number): Readable {
    if (end - start <= SMALL_DATA) {
      const out = new PassThrough();
      const buf = Buffer.allocUnsafe(end - start);
      try {
        if (this.#readAt(buf, 0, buf.length, start) < buf.length) throw new Error('unexpected EOF');
        out.end(buf);
      } catch (e) {
        process.nextTick(() => out.destroy(e as Error));
      }
      return out;
    }
    // A stream of its own open of the file: a destroyed fs stream closes its fd whatever
    // autoClose says, and the window reads and the next entries still need ours.
    const own = fs.openSync(fdPath(this.#fd), fs.constants.O_RDONLY);
    return fs.createReadStream('', { fd: own, start, end: end - 1, autoClose: true, highWaterMark: DATA_CHUNK });
  }
  override close(callback: (err: Error | null) => void): void {
    if (this.#closed) return void process.nextTick(callback, null);
    this.#closed = true;
    fs.close(this.#fd, (e) => callback(e ?? null));
  }
}

function wrap(e: unknown): ArchiveReadError {
  return e instanceof ArchiveReadError ? e : new ArchiveReadError(e instanceof Error ? e.message : String(e), { cause: e });
}

/** One pass over an archive's central directory. Several may be opened over the same fd. */
export class ZipPass implements ArchivePass<ZipEntry> {
  readonly #zf: yauzl.ZipFile;
  readonly #reader: WindowReader;
  /** The caller of next() waiting for yauzl's answer. */
  readonly #localHeader = Buffer.alloc(LOCAL_HEADER);
  #waiting: { resolve: (e: ZipEntry | null) => void; reject: (e: Error) => void } | undefined;
  #ended = false;
  #failed: ArchiveReadError | undefined;
  private constructor(zf: yauzl.ZipFile, reader: WindowReader) {
    this.#zf = zf;
    this.#reader = reader;
    // Listeners for the whole pass, not three added and removed per entry.
    const take = () => {
      const w = this.#waiting;
      this.#waiting = undefined;
      return w;
    };
    zf.on('entry', (e: yauzl.Entry) => {
      take()?.resolve({
        rawName: e.fileName as unknown as Buffer,
        versionMadeBy: e.versionMadeBy,
        externalAttributes: e.externalFileAttributes >>> 0,
        typed: undefined,
        compressedSize: e.compressedSize,
        uncompressedSize: e.uncompressedSize,
        crc32: e.crc32 >>> 0,
        localHeaderOffset: e.relativeOffsetOfLocalHeader,
        canDecode: e.canDecodeFileData(),
        handle: e,
      });
    });
    zf.on('end', () => {
      this.#ended = true;
      take()?.resolve(null);
    });
    zf.on('error', (err: Error) => {
      this.#failed ??= wrap(err);
      take()?.reject(this.#failed);
    });
  }

  /**
   * Opens a pass over the archive `fd` holds (left open: the caller owns it). yauzl closes the fd it
   * reads once the pass is closed, so each pass reads a fresh open of the same file (by object,
   * through /proc/self/fd, never by name).
   */
  static open(fd: number): Promise<ZipPass> {
    const own = fs.openSync(fdPath(fd), fs.constants.O_RDONLY);
    const reader = new WindowReader(own);
    const size = fs.fstatSync(own).size;
    return new Promise((resolve, reject) => {
      yauzl.fromRandomAccessReader(reader, size, { autoClose: false, lazyEntries: true, decodeStrings: false, validateEntrySizes: true, strictFileNames: false }, (err, zf) => {
        if (!err) return resolve(new ZipPass(zf, reader));
        reader.close(() => {});
        reject(wrap(err));
      });
    });
  }

  /** The entry count the end of central directory record declares. */
  get declaredEntries(): number {
    return this.#zf.entryCount;
  }

  /** The next entry, or null after the last one. */
  next(): Promise<ZipEntry | null> {
    if (this.#failed) return Promise.reject(this.#failed);
    if (this.#ended) return Promise.resolve(null);
    return new Promise((resolve, reject) => {
      this.#waiting = { resolve, reject };
      this.#zf.readEntry();
    });
  }

  /**
   * The entry's data, inflated. It is not checked here: the caller counts the bytes against the
   * declared size (stopping at the first byte past it) and checks the CRC-32.
   */
  openData(e: ZipEntry): Promise<Readable> {
    return new Promise((resolve, reject) => {
      // The raw bytes, inflated here in 256 KiB pieces: yauzl's own inflate emits 16 KiB pieces
      // through one more stream (its byte counter), which for a 1 GiB entry was 65,536 writes and
      // callbacks. The extractor counts the bytes against the declared size and checks the CRC.
      this.#zf.openReadStream(e.handle, { decodeFileData: false }, (err, raw) => {
        if (err) return reject(wrap(err));
        if (e.handle.compressionMethod === 0) return resolve(raw);
        const inflate = zlib.createInflateRaw({ chunkSize: DATA_CHUNK });
        // A read error destroys the inflater with it, so the consumer sees it.
        pipeline(raw, inflate, () => {});
        resolve(inflate);
      });
    });
  }

  /**
   * The whole data of a small entry (compressed and inflated sizes both at most SMALL_DATA), read
   * in one go and inflated by zlib in one call: no stream per entry, which for many small files
   * costs more than the data. Null for other entries (use openData). The inflated length is
   * capped at the declared size + 1, so a lying entry cannot make it allocate more.
   */
  readSmall(e: ZipEntry): Buffer | null {
    if (e.compressedSize > SMALL_DATA || e.uncompressedSize > SMALL_DATA || !e.canDecode) return null;
    // The local header read here, synchronously, from the window: through yauzl it cost a
    // callback, a promise and a few objects per entry, a good part of a small entry's work.
    const lh = this.#localHeader;
    if (this.#reader.readNow(lh, 0, LOCAL_HEADER, e.localHeaderOffset) < LOCAL_HEADER) throw new ArchiveReadError('unexpected end of the archive');
    const sig = lh.readUInt32LE(0);
    if (sig !== LOCAL_SIG) throw new ArchiveReadError(`invalid local file header signature: 0x${sig.toString(16)}`);
    const start = e.localHeaderOffset + LOCAL_HEADER + lh.readUInt16LE(26) + lh.readUInt16LE(28);
    const raw = Buffer.allocUnsafe(e.compressedSize);
    if (this.#reader.readNow(raw, 0, raw.length, start) < raw.length) throw new ArchiveReadError('unexpected end of the archive');
    const method = e.handle.compressionMethod;
    let data: Buffer;
    try {
      data = method === 0 ? raw : zlib.inflateRawSync(raw, { maxOutputLength: e.uncompressedSize + 1 });
    } catch (err) {
      throw wrap(err);
    }
    if (data.length !== e.uncompressedSize) {
      throw new ArchiveReadError(`it holds ${data.length > e.uncompressedSize ? 'more' : 'fewer'} bytes than the ${e.uncompressedSize} it declares`);
    }
    return data;
  }

  /** Ends the pass (the fd stays open). */
  close(): void {
    this.#zf.close();
  }
}
