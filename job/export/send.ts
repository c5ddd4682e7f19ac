/**
 * Sends one opened download into an HTTP response: a file as exactly the bytes its size promised
 * (`Content-Length`; a file that shrinks while it is sent cuts the body off rather than end it
 * short), the redacted server.properties from memory, a folder as a zip stream through the one
 * packer (`packToStream`, which applies the download rules to every entry). Back-pressure is the
 * response's: nothing is read ahead of what the receiver takes.
 * @module
 */
import fs from 'node:fs';
import type http from 'node:http';
import { PassThrough } from 'node:stream';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { packToStream, type Source } from '../archive/pack.ts';
import { FileSpill, MemorySpill, type Spill } from '../archive/zip-writer.ts';
import type { WorldRoot } from '../root.ts';
import { FILE_TYPE, isRefusal, openDownload, ZIP_TYPE } from './open.ts';
import { sendRefusal, type DownloadOutcome } from './server.ts';

/** Reads of 1 MiB: a download is one long sequential read, and fewer, larger writes cost less per byte. */
const CHUNK = 1 << 20;

/**
 * Watches one response until its bytes are delivered. Delivered: every byte was handed over
 * (`res.end()` was called) and then either 'finish' (the last byte went to the kernel) or a
 * clean close. A receiver that has read to the end may hang up before this side sees its own
 * 'finish'; a receiver that goes away early either closes before the end was handed over or
 * resets the connection (a socket error here), and both are a cut-off.
 */
export function watchDelivery(res: http.ServerResponse): Promise<void> {
  let failed = false;
  res.socket?.on('error', () => (failed = true));
  const delivered = new Promise<void>((resolve, reject) => {
    let finished = false;
    res.once('finish', () => {
      finished = true;
      resolve();
    });
    res.once('close', () => {
      if (finished || (res.writableEnded && !failed)) resolve();
      else reject(new Error('the receiver went away'));
    });
  });
  delivered.catch(() => {});
  return delivered;
}

/**
 * Waits until `res` may take more, or rejects once it closed. The receiver may have gone while
 * the last read was pending: its 'close' has then been emitted already and no 'drain' will come,
 * so a closed response or an aborted signal rejects at once rather than wait forever.
 */
export function drained(res: http.ServerResponse, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const gone = () => new Error('the receiver went away');
    if (res.destroyed || res.closed || signal.aborted) return reject(gone());
    const settle = (err?: Error) => {
      res.off('drain', onDrain);
      res.off('close', onClose);
      signal.removeEventListener('abort', onClose);
      if (err) reject(err);
      else resolve();
    };
    const onDrain = () => settle();
    const onClose = () => settle(gone());
    res.once('drain', onDrain);
    res.once('close', onClose);
    signal.addEventListener('abort', onClose, { once: true });
  });
}

/**
 * Writes exactly `size` bytes of `fd` from offset 0 and ends `res` with the last of them, reading
 * no further ahead than the receiver takes. Resolves with the bytes handed over: fewer than `size`
 * when the file shrank meanwhile (the response is then left unended, to be cut off).
 */
async function sendRange(fd: number, size: number, res: http.ServerResponse, signal: AbortSignal): Promise<number> {
  const read = (b: Buffer, at: number) =>
    new Promise<number>((resolve, reject) => fs.read(fd, b, 0, b.length, at, (err, n) => (err ? reject(err) : resolve(n))));
  if (size === 0) res.end();
  let off = 0;
  while (off < size) {
    signal.throwIfAborted();
    const b = Buffer.allocUnsafe(Math.min(CHUNK, size - off));
    const n = await read(b, off);
    if (n === 0) return off;
    off += n;
    const chunk = n === b.length ? b : b.subarray(0, n);
    if (off === size) res.end(chunk);
    else if (!res.write(chunk)) await drained(res, signal);
  }
  return off;
}

/**
 * A spill file for the zip's central directory in `scratch`, unlinked as soon as it is open so
 * nothing is left whatever happens; the caller closes `fd`.
 */
function openSpill(scratch: string): { fd: number; spill: Spill } {
  const name = join(scratch, `central-${randomBytes(8).toString('hex')}`);
  const { O_RDWR, O_CREAT, O_EXCL, O_NOFOLLOW } = fs.constants;
  const fd = fs.openSync(name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
  fs.unlinkSync(name);
  return { fd, spill: new FileSpill(fd) };
}

/**
 * `scratch`: a folder of the Pod's own for a folder's central directory (without one it is kept
 * in memory, about 100 bytes a file).
 */
export async function sendDownload(
  root: WorldRoot,
  path: string,
  dir: boolean,
  res: http.ServerResponse,
  signal: AbortSignal,
  scratch?: string,
): Promise<DownloadOutcome> {
  const d = openDownload(root, path, dir);
  if (isRefusal(d)) {
    sendRefusal(res, d);
    return { result: d };
  }
  const common = { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' };
  switch (d.kind) {
    case 'bytes': {
      res.writeHead(200, { ...common, 'content-type': FILE_TYPE, 'content-length': d.bytes.length });
      const delivered = watchDelivery(res);
      res.end(d.bytes);
      await delivered;
      return { result: { files: 1, bytes: d.bytes.length } };
    }
    case 'file': {
      res.writeHead(200, { ...common, 'content-type': FILE_TYPE, 'content-length': d.size });
      const delivered = watchDelivery(res);
      let sent: number;
      try {
        // Exactly `size` bytes from the descriptor opened and checked; growth after the look is not sent.
        sent = await sendRange(d.fd, d.size, res, signal);
      } finally {
        fs.closeSync(d.fd);
      }
      if (sent < d.size) return { failed: `${d.name} shrank while it was sent (${sent} of ${d.size} bytes)` };
      await delivered;
      return { result: d.size === 0 ? { files: 1 } : { files: 1, bytes: d.size } };
    }
    case 'dir': {
      const spilled = scratch === undefined ? undefined : openSpill(scratch);
      try {
        return await sendFolder(root, d.source, res, signal, common, spilled?.spill ?? new MemorySpill());
      } finally {
        // After a cut-off the packer may still hold the spill (it stops at its next write to the
        // response); the program exits right after, which closes it.
        if (spilled && !signal.aborted) fs.closeSync(spilled.fd);
      }
    }
  }
}

async function sendFolder(
  root: WorldRoot,
  source: Source,
  res: http.ServerResponse,
  signal: AbortSignal,
  common: Record<string, string>,
  spill: Spill,
): Promise<DownloadOutcome> {
  res.writeHead(200, { ...common, 'content-type': ZIP_TYPE });
  const delivered = watchDelivery(res);
  const out = new PassThrough({ highWaterMark: CHUNK });
  out.pipe(res);
  // A receiver gone (or a signal) ends the download: the packer is cut off from the response
  // and, its output no longer drained, stops reading at once; the program then exits. `out` is
  // not destroyed, which would fail the packer's own promise behind its back.
  const gone = new Promise<never>((_, reject) => {
    const onAbort = () => {
      out.unpipe(res);
      reject(signal.reason);
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  gone.catch(() => {});
  const packed = packToStream(root, source, out, undefined, spill);
  packed.catch(() => {});
  const stats = await Promise.race([packed, gone]);
  // The pipe ends the response once the packer's last byte is in it.
  out.end();
  await Promise.race([delivered, gone]);
  return { result: { files: stats.files, bytes: stats.bytesRead } };
}
