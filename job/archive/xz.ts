/**
 * The xz decoder: liblzma (node-liblzma's WebAssembly build) as a Node Transform with a memory
 * limit. node-liblzma's own `createUnxz` is a web stream with liblzma's 256 MiB default limit and
 * takes only the first stream; this one sets our limit, takes concatenated streams and stream
 * padding (as `xz -d` does), and refuses anything after them. Loaded only when an xz file is
 * extracted.
 *
 * @module
 */
import { Transform, type TransformCallback } from 'node:stream';
import { copyToWasm, getModule, initModule, WasmLzmaStream, type LZMAModule } from 'node-liblzma/wasm';
import { readWasm } from '../wasm.ts';
import { ArchiveReadError } from './zip-reader.ts';

/**
 * The most memory one xz stream may need to decompress. 72 MiB takes every preset up to
 * `xz -9` / `-9e` (64 MiB dictionary, about 65 MiB to decode) and refuses a dictionary past that,
 * which only a deliberate `--lzma2=dict=` writes: the Job's container has 256 MiB in all.
 */
export const XZ_MEMLIMIT = 72 << 20;

const LZMA_OK = 0;
const LZMA_STREAM_END = 1;
const LZMA_MEMLIMIT_ERROR = 6;
const LZMA_FORMAT_ERROR = 7;
const LZMA_OPTIONS_ERROR = 8;
const LZMA_DATA_ERROR = 9;
const LZMA_BUF_ERROR = 10;
const LZMA_RUN = 0;
const LZMA_FINISH = 3;
/** Decode every concatenated stream, not just the first. */
const LZMA_CONCATENATED = 0x08;
/** Output window in WebAssembly memory. */
const OUT_CHUNK = 256 << 10;

let loaded: Promise<LZMAModule> | undefined;

/** Loads liblzma once per process, from the file job/wasm.ts finds. */
export function loadXz(): Promise<LZMAModule> {
  loaded ??= initModule(async () => {
    const { default: createLZMA } = await import('node-liblzma/wasm/liblzma.js');
    const bin = readWasm('liblzma.wasm');
    return (await createLZMA({ wasmBinary: new Uint8Array(bin.buffer, bin.byteOffset, bin.byteLength) })) as LZMAModule;
  });
  return loaded;
}

function why(ret: number, memlimit: number): string {
  switch (ret) {
    case LZMA_MEMLIMIT_ERROR:
      return `the xz stream needs more than the ${memlimit >> 20} MiB of memory the Job allows to decompress one (its dictionary is too large)`;
    case LZMA_FORMAT_ERROR:
      return 'it is not an xz stream';
    case LZMA_OPTIONS_ERROR:
      return 'the xz stream uses options this reader does not support';
    case LZMA_DATA_ERROR:
      return 'the xz data is corrupt (or something other than xz follows it)';
    case LZMA_BUF_ERROR:
      return 'the xz stream ends early';
    default:
      return `liblzma failed (${ret})`;
  }
}

/** A Transform from xz to the bytes it holds. `loadXz()` must have resolved first. */
export class XzDecoder extends Transform {
  readonly #m: LZMAModule;
  readonly #strm: WasmLzmaStream;
  readonly #out: number;
  readonly #memlimit: number;
  #ended = false;
  #freed = false;

  constructor(memlimit = XZ_MEMLIMIT) {
    super();
    this.#m = getModule();
    this.#memlimit = memlimit;
    this.#strm = new WasmLzmaStream(this.#m);
    const ret = this.#m._lzma_stream_decoder(this.#strm.ptr, BigInt(memlimit), LZMA_CONCATENATED);
    if (ret !== LZMA_OK) {
      this.#free();
      throw new ArchiveReadError(why(ret, memlimit));
    }
    this.#out = this.#m._malloc(OUT_CHUNK);
  }

  #run(chunk: Uint8Array, action: number): void {
    const m = this.#m;
    const inPtr = chunk.length > 0 ? copyToWasm(m, chunk) : 0;
    try {
      this.#strm.setInput(inPtr, chunk.length);
      for (;;) {
        this.#strm.setOutput(this.#out, OUT_CHUNK);
        const ret = m._lzma_code(this.#strm.ptr, action);
        const produced = OUT_CHUNK - this.#strm.availOut;
        if (produced > 0) this.push(Buffer.from(m.HEAPU8.subarray(this.#out, this.#out + produced)));
        if (ret === LZMA_STREAM_END) {
          this.#ended = true;
          // With LZMA_CONCATENATED the end comes only at LZMA_FINISH: anything left is not xz.
          if (this.#strm.availIn > 0) throw new ArchiveReadError('something other than xz follows the xz stream');
          return;
        }
        if (ret !== LZMA_OK) throw new ArchiveReadError(why(ret, this.#memlimit));
        if (this.#strm.availIn === 0 && this.#strm.availOut > 0) return;
      }
    } finally {
      if (inPtr) m._free(inPtr);
    }
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    try {
      if (this.#ended) throw new ArchiveReadError('something other than xz follows the xz stream');
      this.#run(chunk, LZMA_RUN);
      cb();
    } catch (e) {
      this.#free();
      cb(e as Error);
    }
  }

  override _flush(cb: TransformCallback): void {
    try {
      if (!this.#ended) this.#run(new Uint8Array(0), LZMA_FINISH);
      if (!this.#ended) throw new ArchiveReadError('the xz stream ends early');
      cb();
    } catch (e) {
      cb(e as Error);
    } finally {
      this.#free();
    }
  }

  override _destroy(err: Error | null, cb: (error?: Error | null) => void): void {
    this.#free();
    cb(err);
  }

  #free(): void {
    if (this.#freed) return;
    this.#freed = true;
    this.#m._lzma_end(this.#strm.ptr);
    this.#strm.free();
    if (this.#out) this.#m._free(this.#out);
  }
}
