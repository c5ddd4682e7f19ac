/**
 * The tar reader: tar-stream over a fresh open of the archive, or over its decoded bytes
 * (`decoded.ts`: gzip, zstd, xz), one header at a time. A tar has no index: a pass reads the archive front to back, each
 * entry's data skipped (the plan) or streamed (the extraction) before the next header is read, so a
 * pass holds one header and a few buffers whatever the entry count. tar-stream checks every
 * header's checksum and honours pax and GNU long names; names are read as raw bytes (latin1 keeps
 * every byte) so they are decoded and judged exactly as a zip's are. A pax name is UTF-8 by the
 * standard and is taken as such.
 *
 * Every failure of the reader (a bad header, data that ends early, a damaged compressed stream) is an
 * `ArchiveReadError`: the archive, not the system, is at fault.
 *
 * @module
 */
import fs from 'node:fs';
import type { Readable } from 'node:stream';
import tar from 'tar-stream';
import { fdPath } from '../volume/root.ts';
import { openDecoded, type StreamCodec } from './decoded.ts';
import type { EntryKind } from './names.ts';
import type { ArchiveEntry, ArchivePass } from './pass.ts';
import { ArchiveReadError } from './zip-reader.ts';

/** Reads from the archive file in pieces of this size. */
const READ_CHUNK = 256 << 10;
/** Zip's host byte for Unix: unused when `typed` is given, but a true statement of the source. */
const UNIX_MADE_BY = 3 << 8;

type TarStreamEntry = AsyncIterable<Buffer> & { header: tar.Header; resume(): unknown; destroy(err?: Error): unknown };

export interface TarEntry extends ArchiveEntry {
  crc32: undefined;
  /** The entry's data stream (tar-stream's), read in order. */
  readonly stream: TarStreamEntry;
}

function wrap(e: unknown): ArchiveReadError {
  return e instanceof ArchiveReadError ? e : new ArchiveReadError(e instanceof Error ? e.message : String(e), { cause: e });
}

/** What a tar header's type says an entry is. Anything we do not know is not a regular file. */
function kindOf(type: tar.Header['type']): EntryKind {
  switch (type) {
    case 'file':
    case 'contiguous-file':
      return 'file';
    case 'directory':
      return 'dir';
    case 'symlink':
      return 'symlink';
    case 'link':
      return 'hardlink';
    default:
      return 'special'; // devices, FIFOs, GNU sparse and volume headers, unknown types
  }
}

/** One pass over a tar archive, front to back. */
export class TarPass implements ArchivePass<TarEntry> {
  readonly #source: Readable;
  readonly #extract: tar.Extract;
  readonly #entries: AsyncIterator<TarStreamEntry>;
  /** The current entry, its data not yet read to its end by the caller. */
  #current: TarStreamEntry | undefined;
  #failed: ArchiveReadError | undefined;
  #closed = false;

  private constructor(source: Readable) {
    this.#source = source;
    // latin1 maps every byte to one character, so the name's bytes come back whole.
    this.#extract = tar.extract({ filenameEncoding: 'latin1' } as Parameters<typeof tar.extract>[0]);
    // Any stage failing fails the whole pass; the iterator then rejects with it.
    const failPass = (err: Error) => {
      this.#failed ??= wrap(err);
      this.#extract.destroy(this.#failed);
    };
    this.#source.on('error', failPass);
    this.#source.pipe(this.#extract as unknown as NodeJS.WritableStream);
    this.#entries = (this.#extract as unknown as AsyncIterable<TarStreamEntry>)[Symbol.asyncIterator]();
  }

  /**
   * Opens a pass over the archive `fd` holds (left open: the caller owns it), through a fresh open
   * of the same file (by object, through /proc/self/fd, never by name), decoded by `codec` first
   * when the tar is compressed.
   */
  static async open(fd: number, codec?: StreamCodec): Promise<TarPass> {
    if (codec) return new TarPass(await openDecoded(codec, fd));
    const own = fs.openSync(fdPath(fd), fs.constants.O_RDONLY);
    return new TarPass(fs.createReadStream('', { fd: own, autoClose: true, highWaterMark: READ_CHUNK }));
  }

  async next(): Promise<TarEntry | null> {
    if (this.#failed) throw this.#failed;
    // Data the caller did not read is skipped: tar-stream reads no further header until it is.
    this.#current?.resume();
    this.#current = undefined;
    let r: IteratorResult<TarStreamEntry>;
    try {
      r = await this.#entries.next();
    } catch (e) {
      throw (this.#failed ??= wrap(e));
    }
    if (this.#failed) throw this.#failed;
    if (r.done) return null;
    const stream = r.value;
    this.#current = stream;
    const h = stream.header;
    // A pax path is UTF-8 by the standard; a header or GNU long name is raw bytes (read as latin1).
    const paxPath = (h.pax as Record<string, string> | undefined)?.path;
    const rawName = paxPath !== undefined ? Buffer.from(paxPath, 'utf8') : Buffer.from(h.name, 'latin1');
    const size = h.size ?? 0;
    if (!Number.isSafeInteger(size) || size < 0) {
      throw (this.#failed = new ArchiveReadError(`${rawName.toString('utf8')} declares an impossible size`));
    }
    const kind = kindOf(h.type);
    return {
      rawName,
      versionMadeBy: UNIX_MADE_BY,
      externalAttributes: 0,
      typed: { kind, perm: (h.mode ?? 0o644) & 0o777 },
      compressedSize: size,
      localHeaderOffset: -1,
      uncompressedSize: kind === 'file' ? size : 0,
      crc32: undefined,
      canDecode: true,
      stream,
    };
  }

  readSmall(): Buffer | null {
    return null; // a tar's data comes only as the stream, in order
  }

  async openData(e: TarEntry): Promise<AsyncIterable<Buffer>> {
    if (e.stream !== this.#current) throw new ArchiveReadError("an entry's data was asked for after the next entry was read");
    const stream = e.stream;
    const failed = () => this.#failed;
    return {
      async *[Symbol.asyncIterator]() {
        try {
          for await (const chunk of stream) yield chunk;
        } catch (err) {
          throw failed() ?? wrap(err);
        }
        // A truncated archive ends the entry's stream with the pass's failure, or silently.
        const f = failed();
        if (f) throw f;
      },
    };
  }

  /** Ends the pass: the reads stop and the file is closed. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#source.unpipe();
    this.#extract.destroy();
    this.#source.destroy();
  }
}
