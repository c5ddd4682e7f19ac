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
import { packToStream } from '../archive/pack.ts';
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
  return new Promise((resolve, reject) => {
    res.once('close', () => (res.writableFinished ? resolve() : reject(new Error('the receiver went away'))));
    res.end(last);
  });
}

export async function sendDownload(root: WorldRoot, path: string, dir: boolean, res: http.ServerResponse, signal: AbortSignal): Promise<DownloadOutcome> {
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
      const packed = packToStream(root, d.source, out);
      packed.catch(() => {});
      const stats = await Promise.race([packed, gone]);
      out.end();
      await Promise.race([once(res, 'finish'), gone]);
      return { result: { files: stats.files, bytes: stats.bytesRead } };
    }
  }
}
