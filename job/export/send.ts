/**
 * Sends one opened download into an HTTP response: a file as exactly the bytes its size promised
 * (`Content-Length`; a file that shrinks while it is sent cuts the body off rather than end it
 * short), the redacted server.properties from memory, a folder as a zip stream through the one
 * packer (`packToStream`, which applies the download rules to every entry). Back-pressure is the
 * response's: nothing is read ahead of what the receiver takes. A file (and the redacted
 * server.properties) answers one `Range` under lib/protocol/range.ts's rules, with its ETag and
 * `Accept-Ranges: bytes`; a folder's zip, made as it is walked, says `Accept-Ranges: none`.
 * @module
 */

import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import type http from 'node:http';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { bytesEtag, contentRange, decideRange, type RangeAsk, type RangeDecision } from '../../lib/protocol/range.ts';
import { packToStream, type Source } from '../archive/pack.ts';
import { FileSpill, MemorySpill, type Spill } from '../archive/zip-writer.ts';
import type { WorldRoot } from '../volume/root.ts';
import { FILE_TYPE, isRefusal, openDownload, ZIP_TYPE } from './open.ts';
import { type DownloadOutcome, sendRefusal } from './server.ts';

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
 * Writes exactly `count` bytes of `fd` from offset `start` and ends `res` with the last of them,
 * reading no further ahead than the receiver takes. Resolves with the bytes handed over: fewer
 * than `count` when the file shrank meanwhile (the response is then left unended, to be cut off).
 */
async function sendRange(fd: number, start: number, count: number, res: http.ServerResponse, signal: AbortSignal): Promise<number> {
  const read = (b: Buffer, at: number) => new Promise<number>((resolve, reject) => fs.read(fd, b, 0, b.length, at, (err, n) => (err ? reject(err) : resolve(n))));
  if (count === 0) res.end();
  let sent = 0;
  while (sent < count) {
    signal.throwIfAborted();
    const b = Buffer.allocUnsafe(Math.min(CHUNK, count - sent));
    const n = await read(b, start + sent);
    if (n === 0) return sent;
    sent += n;
    const chunk = n === b.length ? b : b.subarray(0, n);
    if (sent === count) res.end(chunk);
    else if (!res.write(chunk)) await drained(res, signal);
  }
  return sent;
}

/**
 * The status and headers of a file answer under `d`: every one says `Accept-Ranges: bytes` and
 * carries the ETag; a part its `Content-Range`; a 416 the size it missed (`bytes *\/size`).
 */
function fileHead(d: RangeDecision, size: number, etag: string): { status: number; headers: Record<string, string | number> } {
  const headers: Record<string, string | number> = { 'accept-ranges': 'bytes', etag };
  const cr = contentRange(d, size);
  if (cr) headers['content-range'] = cr;
  if (d.kind === 'unsatisfiable') return { status: 416, headers: { ...headers, 'content-type': 'application/json', 'content-length': 0 } };
  return { status: d.kind === 'partial' ? 206 : 200, headers: { ...headers, 'content-type': FILE_TYPE, 'content-length': d.kind === 'partial' ? d.end - d.start + 1 : size } };
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
export async function sendDownload(root: WorldRoot, path: string, dir: boolean, res: http.ServerResponse, signal: AbortSignal, scratch?: string, ask: RangeAsk = {}): Promise<DownloadOutcome> {
  const d = openDownload(root, path, dir);
  if (isRefusal(d)) {
    sendRefusal(res, d);
    return { result: d };
  }
  const common = { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' };
  switch (d.kind) {
    case 'bytes': {
      // Redacted in memory: ranges over exactly these bytes, under an ETag of them, so a resume
      // can only continue the same redacted text (a changed file or password is a new ETag).
      const size = d.bytes.length;
      const etag = bytesEtag(d.bytes);
      const range = decideRange(ask, size, etag);
      const head = fileHead(range, size, etag);
      res.writeHead(head.status, { ...common, ...head.headers });
      const delivered = watchDelivery(res);
      const body = range.kind === 'partial' ? d.bytes.subarray(range.start, range.end + 1) : range.kind === 'whole' ? d.bytes : Buffer.alloc(0);
      res.end(body);
      await delivered;
      return { result: range.kind === 'unsatisfiable' ? { files: 0 } : body.length === 0 ? { files: 1 } : { files: 1, bytes: body.length } };
    }
    case 'file': {
      const range = decideRange(ask, d.size, d.etag);
      const head = fileHead(range, d.size, d.etag);
      res.writeHead(head.status, { ...common, ...head.headers });
      const delivered = watchDelivery(res);
      const [start, count] = range.kind === 'partial' ? [range.start, range.end - range.start + 1] : range.kind === 'whole' ? [0, d.size] : [0, 0];
      let sent: number;
      try {
        // Exactly the bytes promised from the descriptor opened and checked; growth after the look is not sent.
        sent = await sendRange(d.fd, start, count, res, signal);
      } finally {
        fs.closeSync(d.fd);
      }
      if (sent < count) return { failed: `${d.name} shrank while it was sent (${sent} of ${count} bytes from ${start})` };
      await delivered;
      // The result's bytes are what was sent: a part's length, none for a 416.
      if (range.kind === 'unsatisfiable') return { result: { files: 0 } };
      return { result: count === 0 ? { files: 1 } : { files: 1, bytes: count } };
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

async function sendFolder(root: WorldRoot, source: Source, res: http.ServerResponse, signal: AbortSignal, common: Record<string, string>, spill: Spill): Promise<DownloadOutcome> {
  // A zip is made as it is walked, never the same bytes twice: no ranges, and it says so.
  res.writeHead(200, { ...common, 'content-type': ZIP_TYPE, 'accept-ranges': 'none' });
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
