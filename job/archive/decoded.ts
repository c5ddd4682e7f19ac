/**
 * The streaming decoders, one place for each: gzip and zstd are Node's own zlib, xz is liblzma
 * (`xz.ts`, loaded only when asked for). Each reads the file through a fresh open by object (never
 * by name) and gives the decoded bytes as a Readable; every failure is an ArchiveReadError.
 *
 * zstd: Node's decoder stops after the first frame and ignores the rest, so a file of several
 * frames (`cat a.zst b.zst`, pzstd) would silently lose data. Frames are therefore decoded one at
 * a time: the decoder's `bytesWritten` is what the frame used, skippable frames are skipped, and
 * anything else after a frame is refused. bzip2 is not here: its decoder cannot stream
 * (`bzip2.ts`).
 *
 * @module
 */
import fs from 'node:fs';
import { Readable } from 'node:stream';
import zlib from 'node:zlib';
import { fdPath } from '../volume/root.ts';
import { ArchiveReadError } from './zip-reader.ts';

export type StreamCodec = 'gzip' | 'zstd' | 'xz';

/** Reads the compressed file in pieces of this size; the decoders give pieces of the same. */
const CHUNK = 256 << 10;
const ZSTD_MAGIC = 0xfd2fb528;
/** xz is read in smaller pieces: the decoder runs over a whole piece's input before it asks for more. */
const XZ_READ = 64 << 10;

export function wrapRead(e: unknown): ArchiveReadError {
  return e instanceof ArchiveReadError ? e : new ArchiveReadError(e instanceof Error ? e.message : String(e), { cause: e });
}

/**
 * The decoded bytes of the file `fd` holds (the caller keeps `fd`). `onRead` is told how many
 * compressed bytes each read took (for progress).
 */
export async function openDecoded(codec: StreamCodec, fd: number, onRead?: (bytes: number) => void): Promise<Readable> {
  const own = fs.openSync(fdPath(fd), fs.constants.O_RDONLY);
  if (codec === 'zstd') return Readable.from(zstdFrames(own, onRead), { objectMode: false, highWaterMark: CHUNK });
  if (codec === 'xz') {
    const xz = await import('./xz.ts');
    await xz.loadXz();
    const source = fs.createReadStream('', { fd: own, autoClose: true, highWaterMark: XZ_READ });
    // Counted as the decoder takes them: a 'data' listener would make the stream flow past it.
    const counted = async function* () {
      for await (const piece of source) {
        onRead?.(piece.length);
        yield piece as Buffer;
      }
    };
    const out = Readable.from(xz.decodeXz(counted()), { objectMode: false, highWaterMark: CHUNK });
    out.on('close', () => source.destroy());
    return out;
  }
  return Readable.from(gzipMembers(own, onRead), { objectMode: false, highWaterMark: CHUNK });
}

/**
 * Feeds `decoder` the file from `start` through one reused buffer, a piece at a time, each only
 * after the decoder took the last (its write callback), and yields what it decodes; ends when the
 * decoder does (a zstd frame's end) or the file does. A read stream would allocate a fresh buffer
 * per piece, and under the Job's small heap those dead buffers force a full collection every few
 * MiB: that cost more than the decoding itself.
 */
async function* fed(decoder: zlib.ZstdDecompress | zlib.Gunzip, fd: number, start: number, onRead?: (bytes: number) => void): AsyncGenerator<Buffer> {
  const input = Buffer.allocUnsafe(CHUNK);
  let ended = false;
  decoder.once('end', () => (ended = true));
  const feed = async () => {
    for (let offset = start; !ended && !decoder.destroyed; ) {
      const got = fs.readSync(fd, input, 0, CHUNK, offset);
      if (got === 0) break;
      offset += got;
      onRead?.(got);
      await new Promise<void>((resolve) => {
        // Also done when the decoder ends or fails mid-piece: its callback may then never come.
        const settle = () => {
          decoder.off('end', settle).off('close', settle);
          resolve();
        };
        decoder.once('end', settle).once('close', settle);
        decoder.write(input.subarray(0, got), settle);
      });
    }
    if (!decoder.destroyed && !decoder.writableEnded) decoder.end();
  };
  const feeding = feed().catch((e: unknown) => decoder.destroy(wrapRead(e)));
  try {
    for await (const piece of decoder) yield piece as Buffer;
  } catch (e) {
    throw wrapRead(e);
  } finally {
    decoder.destroy();
    await feeding;
  }
}

/** Every member of a gzip file, decoded in order (zlib reads members on its own); closes `fd` at the end. */
async function* gzipMembers(fd: number, onRead?: (bytes: number) => void): AsyncGenerator<Buffer> {
  try {
    yield* fed(zlib.createGunzip({ chunkSize: CHUNK }), fd, 0, onRead);
  } finally {
    fs.closeSync(fd);
  }
}

/** Every frame of a zstd file, decoded in order; closes `fd` at the end. */
async function* zstdFrames(fd: number, onRead?: (bytes: number) => void): AsyncGenerator<Buffer> {
  try {
    const size = fs.fstatSync(fd).size;
    if (size === 0) throw new ArchiveReadError('the file is empty, not a zstd stream');
    const head = Buffer.alloc(8);
    for (let offset = 0; offset < size; ) {
      const got = fs.readSync(fd, head, 0, 8, offset);
      const magic = got >= 4 ? head.readUInt32LE(0) : 0;
      if (got >= 8 && (magic & 0xfffffff0) === 0x184d2a50) {
        offset += 8 + head.readUInt32LE(4); // a skippable frame: metadata, no data
        if (offset > size) throw new ArchiveReadError('a skippable zstd frame ends early');
        continue;
      }
      if (magic !== ZSTD_MAGIC) {
        throw new ArchiveReadError(offset === 0 ? 'it is not a zstd stream' : 'something other than zstd follows the zstd stream');
      }
      const decoder = zlib.createZstdDecompress({ chunkSize: CHUNK });
      yield* fed(decoder, fd, offset, onRead);
      const used = decoder.bytesWritten;
      if (used <= 0) throw new ArchiveReadError('a zstd frame could not be read');
      offset += used;
    }
  } finally {
    fs.closeSync(fd);
  }
}
