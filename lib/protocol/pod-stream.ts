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
 * - Cost per byte: the caller's socket is read up to `READ_AHEAD_BYTES` ahead and what has come is
 *   written as one batch; the waits' listeners and timer are made once per request. Pausing the
 *   socket and racing fresh promises for every 64 KiB chunk cost 2.3× the CPU of a bare pipe.
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

/**
 * Reads a body in batches: every chunk that has come since the last call. `discard` lets the rest
 * go without destroying it.
 */
interface ChunkReader {
  /** At least one chunk, in order, or undefined at the body's end. */
  next(): Promise<Uint8Array[] | undefined>;
  discard(): void;
}

/**
 * How much of a Node body is read ahead of the Pod. The socket is paused only past it, not after
 * every chunk: pausing and resuming a socket per 64 KiB chunk cost more CPU than the bytes did.
 */
const READ_AHEAD_BYTES = 1 << 20;

function readerOf(body: StreamBody): ChunkReader {
  if (!body) return { next: async () => undefined, discard: () => {} };
  if (body instanceof ReadableStream) {
    const r = body.getReader();
    return {
      next: async () => {
        const x = await r.read();
        return x.done ? undefined : [x.value];
      },
      discard: () => void r.cancel().catch(() => {}),
    };
  }
  const node = body as unknown as NodeJS.ReadableStream & { destroyed?: boolean; readableEnded?: boolean };
  if (typeof node.on !== 'function') {
    const it = (body as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]();
    return {
      next: async () => {
        const x = (await it.next()) as IteratorResult<Uint8Array>;
        return x.done ? undefined : [x.value];
      },
      discard: () => void it.return?.(),
    };
  }
  // A Node stream, read with pause/resume: abandoning it leaves no reader attached, so it can be
  // resumed and its rest dropped while the answer goes out (destroying it would cut the answer).
  let ended = false;
  let failed: unknown;
  let waiting: { resolve: (c: Uint8Array[] | undefined) => void; reject: (e: unknown) => void } | undefined;
  let queue: Uint8Array[] = [];
  let queued = 0;
  const take = () => {
    const q = queue;
    queue = [];
    queued = 0;
    return q;
  };
  const onData = (c: Uint8Array) => {
    queue.push(c);
    queued += c.length;
    if (waiting) {
      const w = waiting;
      waiting = undefined;
      w.resolve(take());
    } else if (queued >= READ_AHEAD_BYTES) node.pause();
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
      if (queue.length > 0) {
        const q = take();
        node.resume();
        return Promise.resolve(q);
      }
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

type Interruption = 'pod' | 'aborted' | 'idle';

/**
 * The ways one request's waits end early: the Pod ended (answered or went away), the call was
 * aborted, or the caller sent nothing for `idleMs`. Set up once per request, not per wait: a body
 * is thousands of waits, and a listener, timer and race for each cost more than the bytes.
 */
class Interruptions {
  readonly #signal: AbortSignal;
  readonly #idleMs: number | undefined;
  #ended: 'pod' | 'aborted' | undefined;
  #wake: ((why: Interruption) => void) | undefined;
  #timer: NodeJS.Timeout | undefined;
  /** When the current wait for the caller began; undefined while not waiting for the caller. */
  #callerSince: number | undefined;
  readonly #onAbort = () => this.#fire('aborted');

  constructor(podEnded: Promise<void>, signal: AbortSignal, idleMs: number | undefined) {
    this.#signal = signal;
    this.#idleMs = idleMs;
    void podEnded.then(() => this.#fire('pod'));
    if (signal.aborted) this.#ended = 'aborted';
    else signal.addEventListener('abort', this.#onAbort, { once: true });
  }

  #fire(why: Interruption): void {
    if (why !== 'idle') this.#ended ??= why;
    const w = this.#wake;
    this.#wake = undefined;
    w?.(why);
  }

  #onTimer = (): void => {
    if (this.#callerSince === undefined || this.#idleMs === undefined) return;
    const left = this.#callerSince + this.#idleMs - Date.now();
    if (left > 0) this.#timer = setTimeout(this.#onTimer, left);
    else this.#fire('idle');
  };

  /**
   * `p`'s value, or why the wait ended first. `caller`: this is a wait for the caller's body, which
   * the idle limit bounds.
   */
  race<T>(p: Promise<T>, caller: boolean): Promise<T | Interruption> {
    if (this.#ended) return Promise.resolve(this.#ended);
    return new Promise<T | Interruption>((resolve, reject) => {
      const done = () => {
        if (this.#wake !== resolve) return false;
        this.#wake = undefined;
        this.#callerSince = undefined;
        return true;
      };
      this.#wake = resolve;
      if (caller && this.#idleMs !== undefined) {
        this.#callerSince = Date.now();
        if (this.#timer) this.#timer.refresh();
        else this.#timer = setTimeout(this.#onTimer, this.#idleMs);
      }
      p.then(
        (v) => done() && resolve(v),
        (e: unknown) => done() && reject(e),
      );
    });
  }

  close(): void {
    clearTimeout(this.#timer);
    this.#signal.removeEventListener('abort', this.#onAbort);
  }
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
async function sendCounted(
  req: http.ClientRequest,
  reader: ChunkReader,
  size: number,
  signal: AbortSignal,
  idleMs: number | undefined,
  podEnded: Promise<void>,
  podDone: () => boolean,
): Promise<boolean> {
  const waits = new Interruptions(podEnded, signal, idleMs);
  let got = 0;
  let held: Uint8Array | undefined;
  const write = async (chunks: Uint8Array[]) => {
    // One turn of the event loop first: an answer already on the socket is read before writing.
    await new Promise((res) => setImmediate(res));
    if (podDone()) return;
    let room = true;
    if (chunks.length > 1) req.cork();
    for (const c of chunks) room = req.write(c);
    if (chunks.length > 1) req.uncork();
    if (!room && !podDone()) {
      const why = await waits.race(untilDrained(req), false);
      if (why === 'aborted') throw signal.reason;
    }
  };
  try {
    for (;;) {
      signal.throwIfAborted();
      if (podDone()) return false;
      const batch = await waits.race(reader.next(), true);
      if (batch === 'idle') throw stalled(idleMs!);
      if (batch === 'aborted') throw signal.reason;
      if (batch === 'pod') return false;
      if (batch === undefined) break;
      const ready: Uint8Array[] = [];
      for (const chunk of batch) {
        got += chunk.length;
        if (got > size) throw new DomainError('too_large', 'too_large', `the body is longer than its Content-Length of ${size} bytes`);
        if (held) ready.push(held);
        held = chunk;
      }
      if (ready.length > 0) await write(ready);
    }
    if (got !== size) throw shortBody(size);
    if (held) await write([held]);
    if (!podDone()) req.end();
    return true;
  } finally {
    waits.close();
  }
}

/** Resolves at the request's next `drain` (or its close); one listener pair per wait. */
function untilDrained(req: http.ClientRequest): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      req.off('drain', done);
      req.off('close', done);
      resolve();
    };
    req.on('drain', done);
    req.on('close', done);
  });
}
