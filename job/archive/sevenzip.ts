/**
 * 7-Zip (7z-wasm: 7-Zip 24.09 compiled to WebAssembly) as a reader of `.7z` and `.rar` archives, in
 * bounded memory.
 *
 * Each run of 7-Zip is one command (`l -slt` to list, `x -so` to stream every file's data) in a
 * worker thread of its own: `callMain` is synchronous, so on this thread it would either block the
 * event loop or pile its whole output up in memory. The worker forwards 7-Zip's standard output to
 * this thread in pieces of OUT_CHUNK bytes and stops (Atomics.wait) while more than IN_FLIGHT bytes
 * are unread here, so a slow disk or a slow plan slows 7-Zip down instead of growing memory.
 *
 * What the worker gives 7-Zip, and nothing more:
 * - the archive as one read-only file, `/in/archive.<ending>`, whose reads are `pread`s of a
 *   descriptor of the archive this process opened by object (never by name again);
 * - standard output and error taken straight from its `fd_write` calls (whole buffers, not one
 *   character per callback);
 * - a heap that may not grow past HEAP_MAX: a larger allocation fails inside 7-Zip ("Can't allocate
 *   required memory"), which is reported as `heapRefused`, so no archive can take the Job past its
 *   memory limit, whatever its dictionary or header database.
 *
 * @module
 */
import fs from 'node:fs';
import { Worker } from 'node:worker_threads';
import { sevenZipModule } from './sevenzip-wasm.ts';
import { sevenZipGluePath } from './wasm.ts';

/** The most a 7-Zip heap (WebAssembly memory) may grow to. Two run at once during an extraction. */
export const HEAP_MAX = 64 << 20;
/** Standard output is forwarded in pieces of this size (fewer, larger messages). */
export const OUT_CHUNK = 256 << 10;
/** The worker waits while more than this many forwarded bytes are unread. */
export const IN_FLIGHT = 2 << 20;
/** Standard error kept for a message (the start: 7-Zip names the problem first). */
const ERR_KEEP = 8 << 10;

/** Where the 7-Zip glue (Emscripten's JavaScript around 7zz.wasm) is loaded from in the worker. */
function gluePath(): string {
  return sevenZipGluePath();
}

/**
 * The worker's program, a CommonJS script (eval'd: it has to run inside the bundle, which has no
 * file of its own for it). Control words: [0] bytes forwarded and not yet read, [1] 1 = stop.
 */
// biome-ignore lint/complexity/noUselessStringRaw: raw, so a backslash written in the worker's code one day stays as written
const WORKER = String.raw`
const { workerData, parentPort } = require('node:worker_threads');
const fs = require('node:fs');
const { glue, wasmModule, fd, size, name, args, ctlBuf, heapMax, outChunk, inFlight, errKeep } = workerData;
const ctl = new Int32Array(ctlBuf);
class Stopped extends Error {}
let memory;
let heapRefused = false;
let out = Buffer.allocUnsafe(outChunk);
let outLen = 0;
let err = '';
function flush() {
  if (outLen === 0) return;
  const piece = new Uint8Array(outLen);
  piece.set(out.subarray(0, outLen));
  Atomics.add(ctl, 0, outLen);
  outLen = 0;
  parentPort.postMessage({ t: 'out', b: piece }, [piece.buffer]);
  for (let v = Atomics.load(ctl, 0); v > inFlight && Atomics.load(ctl, 1) === 0; v = Atomics.load(ctl, 0)) Atomics.wait(ctl, 0, v, 1000);
  if (Atomics.load(ctl, 1) !== 0) throw new Stopped();
}
function take(bytes) {
  for (let off = 0; off < bytes.length; ) {
    const n = Math.min(bytes.length - off, outChunk - outLen);
    bytes.copy(out, outLen, off, off + n);
    outLen += n;
    off += n;
    if (outLen === outChunk) flush();
  }
}
const SevenZip = require(glue);
SevenZip({
  noInitialRun: true,
  quit: (code, e) => { throw e; },
  instantiateWasm(info, receive) {
    const env = info.env;
    const resize = env.emscripten_resize_heap;
    env.emscripten_resize_heap = (req) => {
      if ((req >>> 0) > heapMax) { heapRefused = true; return 0; }
      return resize(req);
    };
    const write = env.fd_write;
    env.fd_write = (f, iov, iovcnt, pnum) => {
      if (f !== 1 && f !== 2) return write(f, iov, iovcnt, pnum);
      const view = new DataView(memory.buffer);
      let total = 0;
      for (let i = 0; i < iovcnt; i++) {
        const ptr = view.getUint32(iov + i * 8, true);
        const len = view.getUint32(iov + i * 8 + 4, true);
        const bytes = Buffer.from(memory.buffer, ptr, len);
        if (f === 1) take(bytes);
        else if (err.length < errKeep) err += bytes.toString('utf8');
        total += len;
      }
      view.setUint32(pnum, total, true);
      return 0;
    };
    WebAssembly.instantiate(wasmModule, info).then((instance) => {
      memory = instance.exports.memory;
      receive(instance, wasmModule);
    });
    return {};
  },
}).then((m) => {
  m.FS.mkdir('/in');
  const node = m.FS.create('/in/' + name, 0o444);
  node.usedBytes = size;
  node.stream_ops = {
    ...node.stream_ops,
    read: (stream, buffer, offset, length, position) => {
      if (position >= size) return 0;
      return fs.readSync(fd, buffer, offset, Math.min(length, size - position), position);
    },
    write: () => { throw new m.FS.ErrnoError(63); },
  };
  m.FS.chdir('/in');
  let code;
  let stopped = false;
  try {
    code = m.callMain([...args, name]);
  } catch (e) {
    if (e instanceof Stopped || (e && e.name === 'ExitStatus' && Atomics.load(ctl, 1) !== 0)) stopped = true;
    else if (e && e.name === 'ExitStatus') code = e.status;
    else { code = -1; err += 'exception: ' + String(e && e.stack || e); }
  }
  if (!stopped) {
    try { flush(); } catch (e) { err += 'flush: ' + e; stopped = true; }
  }
  parentPort.postMessage({ t: 'end', code: stopped ? -2 : code, err, heapRefused, heapBytes: memory ? memory.buffer.byteLength : 0 });
}, (e) => parentPort.postMessage({ t: 'end', code: -1, err: String(e && e.message || e), heapRefused, heapBytes: 0 }));
`;

export interface SevenZipEnd {
  /** 7-Zip's exit code: 0 fine, 1 warnings, 2 a fatal error, 7 bad command line, 8 out of memory; -1 it crashed. */
  code: number;
  /** The start of its standard error. */
  stderr: string;
  /** True when 7-Zip asked for more heap than HEAP_MAX. */
  heapRefused: boolean;
  /** Its heap at the end, in bytes. */
  heapBytes: number;
}

/**
 * One run of 7-Zip over the archive `fd` holds (`args`: the command and its switches; the archive's
 * name comes last): its standard output as pieces read in order, then `end()`. Stopping early (`stop()`) ends the worker; nothing else is left running.
 */
export class SevenZipRun {
  readonly #worker: Worker;
  readonly #ctl: Int32Array;
  readonly #queue: Buffer[] = [];
  #ended: SevenZipEnd | undefined;
  #failed: Error | undefined;
  #wake: (() => void) | undefined;
  #stopped = false;

  constructor(fd: number, ending: '7z' | 'rar', args: string[]) {
    const size = fs.fstatSync(fd).size;
    const ctlBuf = new SharedArrayBuffer(8);
    this.#ctl = new Int32Array(ctlBuf);
    this.#worker = new Worker(WORKER, {
      eval: true,
      workerData: {
        glue: gluePath(),
        wasmModule: sevenZipModule(), // compiled once per process: every worker instantiates the same code
        fd,
        size,
        name: `archive.${ending}`,
        args,
        ctlBuf,
        heapMax: HEAP_MAX,
        outChunk: OUT_CHUNK,
        inFlight: IN_FLIGHT,
        errKeep: ERR_KEEP,
      },
      // The worker's own JavaScript is small: the glue and a few buffers.
      resourceLimits: { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 2 },
      stdout: false,
      stderr: false,
    });
    this.#worker.on('message', (m: { t: 'out'; b: Uint8Array } | { t: 'end'; code: number; err: string; heapRefused: boolean; heapBytes: number }) => {
      if (m.t === 'out') this.#queue.push(Buffer.from(m.b.buffer, m.b.byteOffset, m.b.byteLength));
      else this.#ended = { code: m.code, stderr: m.err, heapRefused: m.heapRefused, heapBytes: m.heapBytes };
      this.#poke();
    });
    this.#worker.on('error', (e) => {
      this.#failed ??= e;
      this.#poke();
    });
    this.#worker.on('exit', () => {
      this.#failed ??= this.#ended ? undefined : new Error('7-Zip stopped without a result');
      this.#poke();
    });
  }

  #poke(): void {
    const w = this.#wake;
    this.#wake = undefined;
    w?.();
  }

  /** The next piece of standard output, or null when 7-Zip has ended (then `end()` tells how). */
  async read(): Promise<Buffer | null> {
    for (;;) {
      const b = this.#queue.shift();
      if (b) {
        Atomics.sub(this.#ctl, 0, b.length);
        Atomics.notify(this.#ctl, 0);
        return b;
      }
      if (this.#ended) return null;
      if (this.#failed) throw this.#failed;
      await new Promise<void>((resolve) => (this.#wake = resolve));
    }
  }

  /** Bytes 7-Zip has written that this side has not read yet (what backpressure bounds). */
  get unreadBytes(): number {
    return Atomics.load(this.#ctl, 0);
  }

  /** How 7-Zip ended; only after `read()` gave null. */
  end(): SevenZipEnd {
    if (!this.#ended) throw new Error('7-Zip has not ended');
    return this.#ended;
  }

  /** Stops 7-Zip (it stops at its next write) and ends the worker. */
  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    Atomics.store(this.#ctl, 1, 1);
    Atomics.notify(this.#ctl, 0);
    void this.#worker.terminate();
  }
}
