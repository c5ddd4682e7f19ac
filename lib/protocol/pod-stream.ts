/**
 * Streaming a caller's body to a Job Pod over HTTP and always reading the Pod's answer: the one
 * place for this protocol (uploads, session parts; any route that streams a body to a Pod).
 *
 * - The body is counted on the way: the latest chunk is held back until the next one (or the end)
 *   shows the count is still right, so a body longer or shorter than its `Content-Length` never
 *   reaches the Pod whole (413 `too_large` / 400 `upload_incomplete`).
 * - The Pod may answer before it has read the body (a refusal decided on the headers): then the
 *   rest is not sent. Before each write the event loop is given a turn, so an answer already on
 *   the socket is read before a write could fail on the Pod's closed side; and when a write does
 *   fail (EPIPE, ECONNRESET), an answer that is already arriving is still waited for briefly.
 * - The caller's body is always finished with: read whole, or, once the answer is in, left to be
 *   discarded (never destroyed), so the caller can read the answer instead of a reset.
 * - Stalls: a caller that sends nothing for `idleMs` is 408 `upload_stalled`; a Pod that ends
 *   (its answer, or its connection gone) while we wait for the caller ends the wait at once.
 * @module
 */
import http from 'node:http';
import { DomainError } from '../errors.ts';

/**
 * A request's body: the Node request itself when the function runs on Node's HTTP server (no web
 * stream in between), else the Fetch body (route tests). Either is read once, in order.
 */
export type StreamBody = AsyncIterable<Uint8Array> | ReadableStream<Uint8Array> | null;

export interface PodStreamRequest {
  host: string;
  port: number;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: { stream: StreamBody; size: number };
  signal: AbortSignal;
  /** At most this much of the answer's body is kept. */
  maxAnswerBytes: number;
  /** A caller that sends no byte of its body for this long is refused 408 (default: no limit). */
  idleMs?: number;
}

export interface PodAnswer {
  status: number;
  text: string;
}

/** The Pod gave no answer: the connection failed or ended first. `sent` is how far the body got. */
export class PodStreamError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PodStreamError';
  }
}

/** How long a failed write waits for an answer that may already be on its way. */
const ANSWER_GRACE_MS = 1_000;

export const shortBody = (size: number) => new DomainError('upload_incomplete', 'invalid', `the upload ended before all ${size} bytes arrived`);
export const stalled = (idleMs: number) => new DomainError('upload_stalled', 'stalled', `no byte of the body came for ${Math.round(idleMs / 1000)} s; nothing was changed`);

/** Reads chunks of a body one at a time; `discard` lets the rest go without destroying it. */
interface ChunkReader {
  next(): Promise<Uint8Array | undefined>;
  discard(): void;
}

function readerOf(body: StreamBody): ChunkReader {
  if (!body) return { next: async () => undefined, discard: () => {} };
  if (body instanceof ReadableStream) {
    const r = body.getReader();
    return {
      next: async () => {
        const x = await r.read();
        return x.done ? undefined : x.value;
      },
      discard: () => void r.cancel().catch(() => {}),
    };
  }
  const node = body as unknown as NodeJS.ReadableStream & { destroyed?: boolean; readableEnded?: boolean };
  if (typeof node.on !== 'function') {
    const it = (body as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]();
    return { next: async () => ((await it.next()) as IteratorResult<Uint8Array>).value, discard: () => void it.return?.() };
  }
  // A Node stream, read with pause/resume: abandoning it leaves no reader attached, so it can be
  // resumed and its rest dropped while the answer goes out (destroying it would cut the answer).
  let ended = false;
  let failed: unknown;
  let waiting: { resolve: (c: Uint8Array | undefined) => void; reject: (e: unknown) => void } | undefined;
  const queue: Uint8Array[] = [];
  const onData = (c: Uint8Array) => {
    node.pause();
    if (waiting) {
      const w = waiting;
      waiting = undefined;
      w.resolve(c);
    } else queue.push(c);
  };
  const onEnd = () => {
    ended = true;
    waiting?.resolve(undefined);
    waiting = undefined;
  };
  const onError = (e: unknown) => {
    failed = e;
    waiting?.reject(e);
    waiting = undefined;
  };
  const onClose = () => {
    if (!ended) onError(new Error('the caller closed the connection'));
  };
  node.pause();
  node.on('data', onData);
  node.on('end', onEnd);
  node.on('error', onError);
  node.on('close', onClose);
  return {
    next: () => {
      const q = queue.shift();
      if (q) return Promise.resolve(q);
      if (failed) return Promise.reject(failed);
      if (ended) return Promise.resolve(undefined);
      return new Promise((resolve, reject) => {
        waiting = { resolve, reject };
        node.resume();
      });
    },
    discard: () => {
      node.off('data', onData);
      node.off('end', onEnd);
      node.off('error', onError);
      node.off('close', onClose);
      if (!node.destroyed && !node.readableEnded) node.resume();
    },
  };
}

/** Sends the request, streams the body, and answers the Pod's answer or throws the caller's error. */
export async function streamToPod(r: PodStreamRequest): Promise<PodAnswer> {
  // Keep-alive, though this connection carries only this request: a Pod told `close` would close
  // after a refusal with our unsent body unread, which resets the connection and can lose its
  // answer. Kept open, it reads and drops the rest, and we close once answered.
  const headers = { ...r.headers, ...(r.body ? { 'content-length': String(r.body.size), connection: 'keep-alive' } : {}) };
  const req = http.request({ host: r.host, port: r.port, path: r.path, method: r.method, agent: false, headers });
  let answer: PodAnswer | undefined;
  let responding = false;
  let connError: unknown;
  let podEnded!: () => void;
  const ended = new Promise<void>((resolve) => (podEnded = resolve));
  const answered = new Promise<void>((resolve) => {
    req.on('response', (res) => {
      podEnded();
      responding = true;
      const chunks: Buffer[] = [];
      let n = 0;
      const finish = () => {
        answer ??= { status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') };
        resolve();
        podEnded();
      };
      // A write still queued when the answer came may fail on the Pod's closed side and tear the
      // socket down before 'end': an answer whose declared length is in is complete already.
      const declared = Number(res.headers['content-length'] ?? NaN);
      if (declared === 0) finish();
      res.on('data', (c: Buffer) => {
        n += c.length;
        if (n <= r.maxAnswerBytes) chunks.push(c);
        if (n === declared) finish();
      });
      res.on('end', finish);
      res.on('error', (e) => {
        connError ??= e;
        resolve();
        podEnded();
      });
    });
    req.on('error', (e) => {
      connError ??= e;
      // A response already under way may still complete (its end resolves).
      if (!responding) resolve();
      podEnded();
    });
    req.on('close', () => {
      if (!responding) resolve();
      podEnded();
    });
  });
  // An answer that has begun (its headers are in) stops the sending at once: a write now would
  // meet the Pod's closed side, and its failure would tear down the answer before its end.
  const podDone = () => responding || answer !== undefined || connError !== undefined || req.destroyed;

  let callerError: unknown;
  if (r.body) {
    req.flushHeaders();
    const reader = readerOf(r.body.stream);
    let finished = false;
    try {
      finished = await sendCounted(req, reader, r.body.size, r.signal, r.idleMs, ended, podDone);
    } catch (err) {
      callerError = err;
    } finally {
      // What is left of the caller's body is not wanted: let it drain, so the answer reaches them.
      if (!finished) reader.discard();
    }
    // The caller's body failed (too long, short, stalled, gone): the Pod must not take it as whole.
    if (callerError !== undefined && !podDone()) req.destroy();
  } else {
    req.end();
  }
  // The Pod's answer wins over a write that failed because the Pod had already answered.
  if (connError !== undefined && !answer && responding) await Promise.race([answered, new Promise((res) => setTimeout(res, ANSWER_GRACE_MS).unref())]);
  else await answered;
  // Answered before the whole body went: this connection cannot carry another request.
  if (!req.writableEnded) req.destroy();
  // The caller's own fault (too long, short, stalled) is the more precise answer when both came.
  if (callerError instanceof DomainError) throw callerError;
  if (answer && callerError === undefined) return answer;
  if (callerError !== undefined || r.signal.aborted) throw shortBody(r.body?.size ?? 0);
  throw new PodStreamError(`${r.method} ${r.host}: ${connError instanceof Error ? connError.message : 'the connection ended without an answer'}`, { cause: connError });
}

/**
 * Writes the body, pausing while the socket's buffer is full (the Pod's disk sets the pace), and
 * checks the count on the way. Stops early (without error) once the Pod has answered or gone.
 * True when the whole body was read.
 */
async function sendCounted(req: http.ClientRequest, reader: ChunkReader, size: number, signal: AbortSignal, idleMs: number | undefined, podEnded: Promise<void>, podDone: () => boolean): Promise<boolean> {
  let got = 0;
  let held: Uint8Array | undefined;
  const write = async (chunk: Uint8Array) => {
    // One turn of the event loop first: an answer already on the socket is read before writing.
    await new Promise((res) => setImmediate(res));
    if (podDone()) return;
    if (!req.write(chunk) && !podDone()) await Promise.race([untilDrained(req, signal), podEnded]);
  };
  for (;;) {
    signal.throwIfAborted();
    if (podDone()) return false;
    const chunk = await nextChunk(reader, idleMs, podEnded, signal);
    if (chunk === 'pod') return false;
    if (chunk === undefined) break;
    got += chunk.length;
    if (got > size) throw new DomainError('too_large', 'too_large', `the body is longer than its Content-Length of ${size} bytes`);
    if (held) await write(held);
    held = chunk;
  }
  if (got !== size) throw shortBody(size);
  if (held) await write(held);
  if (!podDone()) req.end();
  return true;
}

/** The caller's next chunk; 'pod' when the Pod ended first; 408 when the caller is idle too long. */
async function nextChunk(reader: ChunkReader, idleMs: number | undefined, podEnded: Promise<void>, signal: AbortSignal): Promise<Uint8Array | undefined | 'pod'> {
  let timer: NodeJS.Timeout | undefined;
  const idle = idleMs === undefined ? undefined : new Promise<'idle'>((res) => (timer = setTimeout(() => res('idle'), idleMs)));
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<'aborted'>((res) => {
    onAbort = () => res('aborted');
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    const x = await Promise.race([reader.next(), podEnded.then(() => 'pod' as const), aborted, ...(idle ? [idle] : [])]);
    if (x === 'idle') throw stalled(idleMs!);
    if (x === 'aborted') throw signal.reason;
    return x;
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', onAbort!);
  }
}

function untilDrained(req: http.ClientRequest, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const done = () => {
      req.off('drain', done);
      req.off('close', done);
      signal.removeEventListener('abort', abort);
      resolve();
    };
    const abort = () => {
      req.off('drain', done);
      req.off('close', done);
      reject(signal.reason);
    };
    req.on('drain', done);
    req.on('close', done);
    signal.addEventListener('abort', abort, { once: true });
  });
}
