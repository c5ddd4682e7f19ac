/**
 * The bzip2 decoder: 7-Zip 24.09's (the `7z-wasm` package) run over one bzip2 file. 7-Zip's entry
 * point is synchronous, so it cannot wait for a consumer: it reads the file through a stdin
 * callback and hands every byte it decodes to a stdout callback, gathered here into 1 MiB pieces
 * that go to a synchronous `sink` (a file write) at once. Memory is therefore 7-Zip's own (a
 * bzip2 block is at most 900 kB) plus two 1 MiB buffers, whatever the size. Concatenated bzip2
 * streams are taken, as `bzip2 -d` does; a damaged or cut-short stream, or anything after the
 * last one, fails with 7-Zip's message. Loaded only when a bzip2 file is extracted.
 *
 * While it runs the Job's event loop waits (a stop signal is seen after it): a tar.bz2 is decoded
 * once, into the working folder, and then read as a plain tar.
 *
 * @module
 */
import fs from 'node:fs';
import { startSevenZip } from './sevenzip-wasm.ts';
import { ArchiveReadError } from './zip-reader.ts';

const CHUNK = 1 << 20;
/** Keeps only the end of 7-Zip's messages: the error line is last. */
const STDERR_KEEP = 4096;

/**
 * Decodes the bzip2 file `fd` holds (read from its current start by position; the caller keeps the
 * fd) into `sink`, one piece at a time (the piece is a view of a reused buffer: copy or write it
 * before returning); `onRead` is told each read's size (for progress). A `sink` that throws stops the decoding; the error is rethrown as it is.
 * Resolves with the decoded byte count; rejects with ArchiveReadError when the data is not bzip2.
 */
export async function bunzip2(fd: number, sink: (piece: Buffer) => void, onRead?: (bytes: number) => void): Promise<number> {
  const inBuf = Buffer.allocUnsafe(CHUNK);
  const outBuf = Buffer.allocUnsafe(CHUNK);
  let inLen = 0;
  let inPos = 0;
  let readAt = 0;
  let eof = false;
  let outLen = 0;
  let total = 0;
  let stderr = '';
  let sinkError: unknown;
  const flush = () => {
    if (outLen === 0) return;
    const piece = outBuf.subarray(0, outLen);
    outLen = 0;
    total += piece.length;
    sink(piece);
  };
  const sevenZip = await startSevenZip({
    stdin() {
      if (inPos === inLen) {
        if (eof) return null as unknown as number; // EOF, as Emscripten reads it
        inLen = fs.readSync(fd, inBuf, 0, CHUNK, readAt);
        readAt += inLen;
        inPos = 0;
        onRead?.(inLen);
        if (inLen === 0) {
          eof = true;
          return null as unknown as number;
        }
      }
      return inBuf[inPos++]!;
    },
    stdout(c: number) {
      if (sinkError !== undefined) return;
      outBuf[outLen++] = c;
      if (outLen === CHUNK) {
        try {
          flush();
        } catch (e) {
          sinkError = e;
          throw e; // unwinds 7-Zip: its module is not used again
        }
      }
    },
    stderr(c: number) {
      stderr = (stderr + String.fromCharCode(c)).slice(-STDERR_KEEP);
    },
    print() {},
    printErr(s: string) {
      stderr = (stderr + s + '\n').slice(-STDERR_KEEP);
    },
  });
  let rc: unknown;
  // 7-Zip's exit under Node sets process.exitCode to its status: keep the Job's own.
  const exitCode = process.exitCode;
  try {
    // -si: the data comes through stdin (no file system to mount); -so: decoded bytes to stdout;
    // -bso0 -bsp0: no progress or banner, so only errors reach stderr.
    rc = sevenZip.callMain(['x', '-si', '-tbzip2', '-so', '-bd', '-bso0', '-bsp0']);
  } catch (e) {
    if (sinkError !== undefined) throw sinkError;
    throw new ArchiveReadError(`the bzip2 decoder failed: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  } finally {
    process.exitCode = exitCode;
  }
  if (sinkError !== undefined) throw sinkError;
  if (rc !== 0 && rc !== undefined) throw new ArchiveReadError(bzip2Message(stderr));
  flush();
  return total;
}

/** 7-Zip's error line, as a reason: "ERROR: CRC Failed : ~" → "CRC Failed". */
function bzip2Message(stderr: string): string {
  const line = stderr
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.startsWith('ERROR:'))
    .pop();
  const why = line ? line.replace(/^ERROR:\s*/, '').replace(/\s*:\s*~?\s*$/, '') : 'it is not a bzip2 stream';
  return why === 'Is not archive' ? 'it is not a bzip2 stream' : `bzip2: ${why}`;
}
