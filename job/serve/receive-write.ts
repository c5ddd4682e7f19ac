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
import { bearerMatches, listenOn, send } from './server.ts';
import { Lifecycle, type StopReason } from './lifecycle.ts';

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

const HEX64 = /^[0-9a-f]{64}$/;
const LENGTH = /^(0|[1-9]\d{0,15})$/;

export async function startWriteReceiving(o: WriteReceiveOptions): Promise<WriteReceiving> {
  if (!HEX64.test(o.tokenSha256)) throw new Error('the token digest must be 64 lowercase hex characters');
  const expected = Buffer.from(o.tokenSha256, 'hex');
  let busy = false;
  let content: Buffer | undefined;
  let resolveStopped!: (v: { reason: StopReason | 'received'; content?: Buffer }) => void;
  const stopped = new Promise<{ reason: StopReason | 'received'; content?: Buffer }>((r) => (resolveStopped = r));

  const server = process.getBuiltinModule('node:http').createServer(
    { requestTimeout: 0, headersTimeout: 5_000, keepAliveTimeout: 1_000, maxHeaderSize: 8 << 10 },
    (req, res) => handle(req, res),
  );
  // The function is the only caller; a few connections leave room for a retry beside a dying one.
  server.maxConnections = 4;
  server.setTimeout(o.socketIdleMs ?? 10_000, (socket) => socket.destroy());
  const life = new Lifecycle<'received'>(server, {
    idleMs: o.idleMs,
    lifetimeMs: o.lifetimeMs,
    graceMs: 1_000,
    onStopped: (reason) => resolveStopped(content ? { reason, content } : { reason }),
  });

  function refuse(req: http.IncomingMessage, res: http.ServerResponse, status: number, error: string, extra: Record<string, string> = {}): void {
    // The body is not read: the connection cannot carry another request.
    res.setHeader('connection', 'close');
    req.resume();
    send(res, status, JSON.stringify({ error }), extra);
  }

  function handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    if (!bearerMatches(req.headers.authorization, expected)) return refuse(req, res, 401, 'unauthorized');
    const url = new URL(req.url ?? '/', 'http://write.invalid');
    if (url.pathname !== WRITE_CONTENT_PATH) return refuse(req, res, 404, 'not found');
    if (req.method !== 'PUT') return refuse(req, res, 405, 'method not allowed', { allow: 'PUT' });
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
      res.once('finish', () => life.stop('received'));
      res.once('close', () => life.stop('received'));
    });
  }

  const address = await listenOn(server, o.port, o.host);
  life.armIdle();
  return { address, stopped, stop: (reason) => life.stop(reason) };
}
