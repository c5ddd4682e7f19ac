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
import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import { pipeline } from 'node:stream/promises';
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
 * Ends the response and waits until every byte has been handed to the kernel: the program stops
 * (and closes its connections) right after, and bytes still queued in the process would be lost
 * to a receiver slower than the disk.
 */
function endResponse(res: http.ServerResponse, last?: Buffer): Promise<void> {
  // 'finish' means the last byte went to the kernel; a 'close' without it is a cut-off. The two
  // events, not `writableFinished` read at 'close', decide: that getter also looks at buffers
  // that may not be settled yet when a slow receiver drains the tail.
  return new Promise((resolve, reject) => {
    let finished = false;
    res.once('finish', () => {
      finished = true;
      resolve();
    });
    res.once('close', () => {
      if (!finished) reject(new Error('the receiver went away'));
    });
    res.end(last);
  });
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
    case 'bytes':
      res.writeHead(200, { ...common, 'content-type': FILE_TYPE, 'content-length': d.bytes.length });
      await endResponse(res, d.bytes);
      return { result: { files: 1, bytes: d.bytes.length } };
    case 'file': {
      res.writeHead(200, { ...common, 'content-type': FILE_TYPE, 'content-length': d.size });
      if (d.size === 0) {
        fs.closeSync(d.fd);
        await endResponse(res);
        return { result: { files: 1 } };
      }
      // Exactly `size` bytes from the descriptor opened and checked; growth after the look is not sent.
      const rs = fs.createReadStream('', { fd: d.fd, autoClose: true, start: 0, end: d.size - 1, highWaterMark: CHUNK });
      await pipeline(rs, res, { signal, end: false });
      if (rs.bytesRead < d.size) return { failed: `${d.name} shrank while it was sent (${rs.bytesRead} of ${d.size} bytes)` };
      await endResponse(res);
      return { result: { files: 1, bytes: d.size } };
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
  out.end();
  await Promise.race([once(res, 'finish'), gone]);
  return { result: { files: stats.files, bytes: stats.bytesRead } };
}
