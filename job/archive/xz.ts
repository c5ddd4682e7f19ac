/**
 * The xz decoder: liblzma (node-liblzma's WebAssembly build) as a pull-driven generator with a
 * memory limit. node-liblzma's own `createUnxz` is a web stream with liblzma's 256 MiB default limit and
 * takes only the first stream; this one sets our limit, takes concatenated streams and stream
 * padding (as `xz -d` does), and refuses anything after them. Loaded only when an xz file is
 * extracted.
 *
 * @module
 */
import {
  getModule,
  initModule,
  LZMA_BUF_ERROR,
  LZMA_DATA_ERROR,
  LZMA_FINISH,
  LZMA_FORMAT_ERROR,
  LZMA_MEMLIMIT_ERROR,
  LZMA_OK,
  LZMA_OPTIONS_ERROR,
  LZMA_RUN,
  LZMA_STREAM_END,
  type LZMAModule,
  WasmLzmaStream,
} from 'node-liblzma/wasm';
import { readWasm } from './wasm.ts';
import { ArchiveReadError } from './zip-reader.ts';

/**
 * The most memory one xz stream may need to decompress. 72 MiB takes every preset up to
 * `xz -9` / `-9e` (64 MiB dictionary, about 65 MiB to decode) and refuses a dictionary past that,
 * which only a deliberate `--lzma2=dict=` writes: the Job's container has 256 MiB in all.
 */
export const XZ_MEMLIMIT = 72 << 20;

/** Decode every concatenated stream, not just the first (liblzma's flag; node-liblzma exports no decoder flags). */
const LZMA_CONCATENATED = 0x08;
/** Output window in WebAssembly memory. */
const OUT_CHUNK = 256 << 10;

let loaded: Promise<LZMAModule> | undefined;

/** Loads liblzma once per process, from the file job/archive/wasm.ts finds. */
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

/**
 * The bytes the xz data of `source` holds, one piece (at most 256 KiB) per step, as the consumer
 * asks for them: a generator, so the decoder runs only as fast as its output is taken, and xz's
 * ratio (a 256 KiB read may hold hundreds of MiB) never piles output up in memory. `loadXz()`
 * must have resolved first. Frees liblzma's state however the consumer stops.
 */
export async function* decodeXz(source: AsyncIterable<Buffer>, memlimit = XZ_MEMLIMIT): AsyncGenerator<Buffer> {
  const m = getModule();
  const strm = new WasmLzmaStream(m);
  let inPtr = 0;
  let inCap = 0;
  let out = 0;
  try {
    const ret = m._lzma_stream_decoder(strm.ptr, BigInt(memlimit), LZMA_CONCATENATED);
    if (ret !== LZMA_OK) throw new ArchiveReadError(why(ret, memlimit));
    out = m._malloc(OUT_CHUNK);
    let ended = false;
    /** Runs the decoder over what input it holds, yielding every piece; true at the stream's end. */
    const run = function* (action: number): Generator<Buffer, boolean> {
      for (;;) {
        strm.setOutput(out, OUT_CHUNK);
        const r = m._lzma_code(strm.ptr, action);
        const produced = OUT_CHUNK - strm.availOut;
        // A copy: the window is reused by the next step.
        if (produced > 0) yield Buffer.from(m.HEAPU8.subarray(out, out + produced));
        if (r === LZMA_STREAM_END) {
          // With LZMA_CONCATENATED the end comes only at LZMA_FINISH: anything left is not xz.
          if (strm.availIn > 0) throw new ArchiveReadError('something other than xz follows the xz stream');
          return true;
        }
        if (r !== LZMA_OK) throw new ArchiveReadError(why(r, memlimit));
        if (strm.availIn === 0 && strm.availOut > 0) return false;
      }
    };
    for await (const chunk of source) {
      if (chunk.length === 0) continue;
      if (ended) throw new ArchiveReadError('something other than xz follows the xz stream');
      if (chunk.length > inCap) {
        if (inPtr) m._free(inPtr);
        inPtr = m._malloc(chunk.length);
        inCap = chunk.length;
      }
      m.HEAPU8.set(chunk, inPtr);
      strm.setInput(inPtr, chunk.length);
      ended = yield* run(LZMA_RUN);
    }
    if (!ended) {
      strm.setInput(0, 0);
      ended = yield* run(LZMA_FINISH);
    }
    if (!ended) throw new ArchiveReadError('the xz stream ends early');
  } finally {
    m._lzma_end(strm.ptr);
    strm.free();
    if (out) m._free(out);
    if (inPtr) m._free(inPtr);
  }
}
