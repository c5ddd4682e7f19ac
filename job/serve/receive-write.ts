/**
 * The write Job's content receiver: with a job key, a write's bytes do not ride in the Job's env
 * (where anyone who can list Pods or Jobs reads them) but come from the function over HTTP on the
 * Pod's own address, as an upload's do. It takes exactly one body and stops listening; the write
 * op then lands it (write-run.ts), so every write rule is the one-shot op's.
 *
 * Wire (`Authorization: Bearer <token>` checked first, 401 otherwise, before anything is looked at):
 * - `PUT /content` with `Content-Length` of at most `maxBytes` (411 without one, or for a chunked
 *   body; 413 over the limit, before a byte is read) → 200 `{"received":<n>}` once all `n` bytes
 *   are in. The receiver then stops: later calls find nothing listening.
 * - a body that breaks off before `Content-Length` bytes is dropped whole (nothing is kept, nothing
 *   is written) and the receiver waits again, for a retry or its idle end;
 * - 409 while another body is being read; 404/405 for anything else.
 *
 * It stops without content after `idleMs` with nothing in hand (the function that was to send it
 * gave up or died), at `lifetimeMs`, or on a signal; then nothing is written.
 * @module
 */
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WRITE_CONTENT_PATH } from '../../lib/protocol/content-env.ts';
import { errorBody, send } from '../http/answer.ts';
import type { StopReason } from '../http/lifecycle.ts';
import { PodServer, whenAnswered } from '../http/listen.ts';

export interface WriteReceiveOptions {
  host: string;
  port: number;
  tokenSha256: string;
  /** The most bytes a body may have (the write op's own limit). */
  maxBytes: number;
  idleMs: number;
  lifetimeMs: number;
  /** A socket that sends nothing for this long is closed (a stalled body is dropped). */
  socketIdleMs?: number;
}

export interface WriteReceiving {
  address: AddressInfo;
  /** Settles once stopped: with the content when one whole body came, else without. */
  stopped: Promise<{ reason: StopReason | 'received'; content?: Buffer }>;
  stop(reason?: StopReason): void;
}

const LENGTH = /^(0|[1-9]\d{0,15})$/;

export async function startWriteReceiving(o: WriteReceiveOptions): Promise<WriteReceiving> {
  let busy = false;
  let content: Buffer | undefined;
  const pod = new PodServer<'received'>({
    tokenSha256: o.tokenSha256,
    // The body is not read on a refusal: the connection cannot carry another request.
    closeOnRefusal: true,
    requestTimeoutMs: 0,
    keepAliveTimeoutMs: 1_000,
    // The function is the only caller; a few connections leave room for a retry beside a dying one.
    maxConnections: 4,
    socketIdleMs: o.socketIdleMs ?? 10_000,
    life: { idleMs: o.idleMs, lifetimeMs: o.lifetimeMs, graceMs: 1_000 },
  });
  const { life } = pod;

  function refuse(req: http.IncomingMessage, res: http.ServerResponse, status: number, error: string): void {
    // The body is not read: the connection cannot carry another request.
    res.setHeader('connection', 'close');
    req.resume();
    send(res, status, errorBody(error));
  }

  pod.route('PUT', WRITE_CONTENT_PATH, (req, res) => {
    const declared = req.headers['content-length'];
    if (declared === undefined || req.headers['transfer-encoding'] !== undefined || !LENGTH.test(declared)) {
      return refuse(req, res, 411, 'Content-Length is required');
    }
    const size = Number(declared);
    if (size > o.maxBytes) return refuse(req, res, 413, `the content is ${size} bytes; a write takes at most ${o.maxBytes}`);
    if (busy || content !== undefined || life.stopping) return refuse(req, res, 409, 'busy');
    busy = true;
    life.holdIdle();
    const buf = Buffer.alloc(size);
    let got = 0;
    let over = false;
    req.on('data', (c: Buffer) => {
      // Node's parser never passes more than Content-Length; the check keeps the copy in bounds anyway.
      if (got + c.length > size) {
        over = true;
        req.destroy();
        return;
      }
      c.copy(buf, got);
      got += c.length;
    });
    const dropped = () => {
      if (!busy) return;
      busy = false;
      // Nothing of a broken body is kept: the next one starts from nothing.
      life.armIdle();
    };
    req.on('aborted', dropped);
    req.on('error', dropped);
    req.on('close', () => {
      if (busy && !req.complete) dropped();
    });
    req.on('end', () => {
      if (!busy || over || got !== size) return dropped();
      busy = false;
      content = buf;
      res.setHeader('connection', 'close');
      send(res, 200, JSON.stringify({ received: size }));
      // One body only: stop listening once the answer is out.
      whenAnswered(res, () => life.stop('received'));
    });
  });

  const stopped = pod.stopped.then((reason) => (content ? { reason, content } : { reason }));
  const address = await pod.listen(o.port, o.host);
  life.armIdle();
  return { address, stopped, stop: (reason) => life.stop(reason) };
}
