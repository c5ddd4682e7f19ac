/**
 * The tar packer: an `EntrySink` (pack.ts) that writes a tar stream (tar-stream's pack: ustar
 * headers, pax ones for long and non-ASCII names) through one compressor — gzip or zstd from
 * Node's zlib, xz from liblzma in WebAssembly — into a Writable. Memory is bounded: one entry
 * streams at a time, with backpressure from the output through the compressor.
 *
 * A tar header says the size before the data, so a file is packed as it was when opened: bytes it
 * gained since are left out, and one that shrank fails the whole archive (its entry cannot be
 * finished honestly; the caller leaves nothing behind). The world is held while it is packed, so
 * neither happens but by something outside the game and the Job.
 *
 * Levels: see `TAR_LEVELS` and docs/archives.md.
 * @module
 */
import { once } from 'node:events';
import { Duplex, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import tar from 'tar-stream';
import type { PackFormat } from '../../lib/protocol/pack-format.ts';
import { GAME_GID, GAME_UID } from '../runtime/types.ts';
import type { EntrySink } from './pack.ts';
import { readWasm } from './wasm.ts';
import type { EntryMeta } from './zip-writer.ts';

export type TarFormat = Exclude<PackFormat, 'zip'>;

/**
 * Each compressor's level. A world is mostly region files and gzipped NBT, already compressed, so a
 * higher level spends minutes finding nothing: gzip 1 and zstd 3 (its default: faster than gzip 1
 * and smaller), xz preset 1 (a 1 MiB dictionary: about 10 MiB of encoder memory in a 256 MiB Job,
 * where the default 6 takes 94 MiB and is several times slower for a few per cent).
 */
export const TAR_LEVELS: Record<TarFormat, number> = { 'tar.gz': 1, 'tar.xz': 1, 'tar.zst': 3 };

let lzmaReady: Promise<void> | undefined;

/** liblzma's WebAssembly module, loaded once per process, only when an xz archive is made. */
async function xzCompressor(preset: number): Promise<Duplex> {
  const lzma = await import('node-liblzma/wasm');
  lzmaReady ??= (async () => {
    const createLZMA = (await import('node-liblzma/wasm/liblzma.js')).default;
    await lzma.initModule(() => createLZMA({ wasmBinary: readWasm('liblzma.wasm') }));
  })();
  await lzmaReady;
  return Duplex.fromWeb(lzma.createXz({ preset }) as unknown as TransformStream<Uint8Array, Uint8Array>);
}

/** zlib's output buffer: its 16 KiB default costs a round trip per 16 KiB of output. */
const OUT_CHUNK = 256 << 10;
/**
 * How far the packer may read ahead of the compressor: the compressor works in the thread pool, so
 * with room to queue the next pieces, reading files and compressing overlap on two cores.
 */
const AHEAD = 2 << 20;
/** zlib's streams pass their stream options on to Transform, though its types do not say so. */
const ahead = { highWaterMark: AHEAD } as object;

/** The compressor of one format, at its level. */
export async function compressorFor(format: TarFormat): Promise<Duplex> {
  const level = TAR_LEVELS[format];
  if (format === 'tar.gz') return zlib.createGzip({ level, memLevel: 9, chunkSize: OUT_CHUNK, ...ahead });
  if (format === 'tar.zst') return zlib.createZstdCompress({ chunkSize: OUT_CHUNK, ...ahead, params: { [zlib.constants.ZSTD_c_compressionLevel]: level } });
  return xzCompressor(level);
}

/** What the compressor is given at a time, at least (but the last piece). */
const GATHER = 256 << 10;

/**
 * The pack's pieces (a 512-byte header, the data, the padding: several per file) joined into
 * pieces of GATHER bytes or more: zlib's streams compress each piece they are written in a
 * thread-pool round trip of its own, which for many small files cost more than the compression.
 */
async function* gathered(src: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  let parts: Buffer[] = [];
  let n = 0;
  for await (const c of src) {
    if (c.length >= GATHER && n === 0) {
      yield c;
      continue;
    }
    parts.push(c);
    n += c.length;
    if (n >= GATHER) {
      yield Buffer.concat(parts, n);
      parts = [];
      n = 0;
    }
  }
  if (n > 0) yield Buffer.concat(parts, n);
}

/** Permission bits only: the type is the header's, and no setuid, setgid or sticky bit travels. */
const PERM = 0o777;

/** A file that shrank while it was packed: its entry cannot be finished, so neither can the archive. */
export class ShrankError extends Error {
  constructor(name: string) {
    super(`${name} shrank while it was being packed; nothing was written, try again`);
    this.name = 'ShrankError';
  }
}

export class TarSink implements EntrySink {
  readonly #pack = tar.pack();
  readonly #done: Promise<void>;
  #error: Error | undefined;

  /** Writes the tar, through `compressor`, into `out` (which the caller ends and syncs after finish). */
  constructor(compressor: Duplex, out: Writable) {
    // The pack stream is read as an async iterable: tar-stream's streams are not Node's.
    this.#done = pipeline(gathered(this.#pack as unknown as AsyncIterable<Buffer>), compressor, out, { end: false });
    this.#done.catch((e: Error) => (this.#error ??= e));
  }

  #check(): void {
    if (this.#error) throw this.#error;
  }

  /** Resolves when tar-stream has taken the entry whole; rejects on its error or the output's. */
  #entry(header: Partial<tar.Header> & Pick<tar.Header, 'name'>, body?: (sink: Writable) => Promise<void>): Promise<void> {
    this.#check();
    return new Promise<void>((resolve, reject) => {
      const sink = this.#pack.entry(header, (e?: Error | null) => (e ? reject(e) : resolve())) as unknown as Writable;
      // A destroyed entry reports its error here as well; unheard, it would end the program.
      sink.on('error', reject);
      if (!body) return;
      body(sink).then(
        () => sink.end(),
        (e: Error) => {
          sink.destroy(e);
          reject(e);
        },
      );
    });
  }

  async addDirectory(meta: EntryMeta): Promise<void> {
    await this.#entry({ name: `${meta.name}/`, type: 'directory', mode: meta.mode & PERM, mtime: meta.mtime, uid: GAME_UID, gid: GAME_GID });
  }

  async addFile(meta: EntryMeta, chunks: AsyncIterable<Buffer> | Iterable<Buffer>, _level: number, size: number): Promise<number> {
    let n = 0;
    await this.#entry({ name: meta.name, type: 'file', size, mode: meta.mode & PERM, mtime: meta.mtime, uid: GAME_UID, gid: GAME_GID }, async (sink) => {
      for await (const c of chunks) {
        this.#check();
        const piece = n + c.length > size ? c.subarray(0, size - n) : c;
        n += piece.length;
        if (piece.length > 0 && !sink.write(piece)) await once(sink, 'drain');
        if (n >= size) break;
      }
      if (n < size) throw new ShrankError(meta.name);
    });
    return n;
  }

  async finish(): Promise<void> {
    this.#check();
    this.#pack.finalize();
    await this.#done;
  }
}
