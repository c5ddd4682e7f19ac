/**
 * Uploads, function side: a receiver Job per upload, found by its op label with `pods list`, called
 * on its Pod address with its own token (HMAC of the Job's name under the shared key; the Job spec
 * holds only the token's SHA-256). The request body is streamed straight to the Pod: no copy on the
 * function's disk, one chunk in memory at a time, and the Pod's pace (its disk) is the caller's.
 * Verbs: `jobs create`, `pods list`. Nothing is kept in the instance.
 * @module
 */
import http from 'node:http';
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import type { JobSettings, Target } from '../files/editor.ts';
import { newOpId } from '../files/editor.ts';
import { checkResult } from '../files/decode.ts';
import { ApiError } from '../http/envelope.ts';
import { filesJobName } from '../job-spec/render.ts';
import { RECEIVE_PORT, renderReceiverJob } from '../job-spec/upload-job.ts';
import { describeKubeError } from '../kube/errors.ts';
import { FILES_CONTAINER, LABEL_FILES_OP } from '../labels.ts';
import { callableAddress, jobFinished } from '../kube/job-facts.ts';
import { parseResultPayload } from '../protocol/result-parse.ts';
import { FilesTimeoutError, RunnerError } from '../runner/errors.ts';
import { jobToken, tokenDigest } from '../browse/token.ts';
import { readKey } from './key.ts';

export interface ReceiverApi {
  createJob(namespace: string, job: V1Job): Promise<unknown>;
  listPods(namespace: string, labelSelector: string): Promise<V1Pod[]>;
  listJobs(namespace: string, labelSelector: string): Promise<V1Job[]>;
}

/** How long an answered upload waits for its receiver Job to be marked finished. */
export const FINISH_WAIT_MS = 5_000;

/**
 * Waits (at most `ms`) until every Job `selector` picks has a terminal condition: until then the
 * world counts as held (by Felis's rule and ours), and a write or a start right after the answer
 * would be refused. Past `ms` it returns anyway; the Job's own end frees the world soon after.
 * Answers the Jobs as last listed ([] when no listing came through).
 */
export async function jobsFinished(api: Pick<ReceiverApi, 'listJobs'>, namespace: string, selector: string, ms: number): Promise<V1Job[]> {
  const end = performance.now() + ms;
  let last: V1Job[] = [];
  for (let delay = 20; performance.now() < end; delay = Math.min(delay * 2, 250)) {
    const jobs = await api.listJobs(namespace, selector).catch(() => undefined);
    if (jobs) last = jobs;
    if (jobs?.every(jobFinished)) return jobs;
    await new Promise((r) => setTimeout(r, delay));
  }
  return last;
}

export interface UploadSettings {
  /** The shared key the receivers' tokens are derived from. */
  keyFile: string;
  /** How long a request waits for its receiver to listen (→ 504 files_timeout). */
  startTimeoutMs: number;
}

/**
 * A request's body: the Node request itself when the function runs on Node's HTTP server (no web
 * stream in between), else the Fetch body (route tests). Either is read once, in order.
 */
export type UploadBody = AsyncIterable<Uint8Array> | ReadableStream<Uint8Array> | null;

/** The body of a Hono request, preferring the untouched Node request under @hono/node-server. */
export function uploadBody(c: { env: unknown; req: { raw: Request } }): UploadBody {
  const incoming = (c.env as { incoming?: http.IncomingMessage } | undefined)?.incoming;
  if (incoming && typeof incoming.readableDidRead === 'boolean' && !incoming.readableDidRead) return incoming;
  return c.req.raw.body;
}

export interface SingleUpload {
  path: string;
  size: number;
  /** Lowercase hex. */
  sha256: string;
  overwrite: boolean;
}

/** What the single-upload route needs (UploadReceivers, or a fake in route tests). */
export interface UploadChannel {
  /** Lands the body at the path; answers its SHA-256, or throws the caller's error. */
  single(t: Target, u: SingleUpload, body: UploadBody, signal: AbortSignal): Promise<{ sha256: string }>;
}

export interface ReceiverOptions {
  key?: Buffer;
  /** The receiver's port (tests: one picked when their receiver listens). */
  port?: number | (() => number);
  newId?: () => string;
}

/** A single upload's receiver stops this long after its start whatever happens (64 MiB at ≥ 128 KiB/s). */
const SINGLE_LIFETIME_SECONDS = 540;
/**
 * …and this long without a request: the function sends the body right after `/ready` answers, so
 * a receiver that hears nothing for this long lost its caller and gives the world back.
 */
const SINGLE_IDLE_SECONDS = 10;
const POLL_MS = 40;

export const shortBody = (size: number) => new ApiError(400, 'upload_incomplete', `the upload ended before all ${size} bytes arrived`);

/** A receiver Pod that can take a call: running, its container up, an address. */
export function receiverAddress(pods: V1Pod[]): { ip?: string; ended?: string } {
  for (const p of pods) {
    const phase = p.status?.phase;
    if (phase === 'Succeeded' || phase === 'Failed') return { ended: phase };
    const ip = callableAddress(p, FILES_CONTAINER);
    if (ip) return { ip };
  }
  return {};
}

export class UploadReceivers implements UploadChannel {
  readonly #api: ReceiverApi;
  readonly #settings: JobSettings;
  readonly #cfg: UploadSettings;
  readonly #o: ReceiverOptions;

  constructor(api: ReceiverApi, settings: JobSettings, cfg: UploadSettings, o: ReceiverOptions = {}) {
    this.#api = api;
    this.#settings = settings;
    this.#cfg = cfg;
    this.#o = o;
  }

  async single(t: Target, u: SingleUpload, body: UploadBody, signal: AbortSignal): Promise<{ sha256: string }> {
    const key = this.#o.key ?? readKey(this.#cfg.keyFile);
    const opId = `u${(this.#o.newId ?? newOpId)().slice(1)}`;
    const name = filesJobName(t.server, opId);
    const token = jobToken(key, name);
    const job = renderReceiverJob({
      ...this.#settings,
      server: t.server,
      opId,
      worldPvc: t.world.claim,
      nodeName: t.world.node,
      tokenSha256: tokenDigest(token),
      once: true,
      idleSeconds: SINGLE_IDLE_SECONDS,
      lifetimeSeconds: SINGLE_LIFETIME_SECONDS,
    });
    try {
      await this.#api.createJob(this.#settings.namespace, job);
    } catch (err) {
      throw new RunnerError(`create upload job ${name}: ${describeKubeError(err)}`, { cause: err });
    }
    try {
      const ip = await this.#ready(name, opId, token, signal);
      return await sendBody({ ip, port: this.#port(), token, upload: u, body, signal });
    } finally {
      // Answer once the receiver no longer holds the world, as a write does.
      await jobsFinished(this.#api, this.#settings.namespace, `${LABEL_FILES_OP}=${opId}`, FINISH_WAIT_MS);
    }
  }

  #port(): number {
    const p = this.#o.port;
    return typeof p === 'function' ? p() : (p ?? RECEIVE_PORT);
  }

  /** Waits until the receiver answers `/ready`: the body can be sent only once. */
  async #ready(name: string, opId: string, token: string, signal: AbortSignal): Promise<string> {
    const end = performance.now() + this.#cfg.startTimeoutMs;
    const selector = `${LABEL_FILES_OP}=${opId}`;
    for (;;) {
      signal.throwIfAborted();
      let pods: V1Pod[];
      try {
        pods = await this.#api.listPods(this.#settings.namespace, selector);
      } catch (err) {
        throw new RunnerError(`list pods of upload job ${name}: ${describeKubeError(err)}`, { cause: err });
      }
      const a = receiverAddress(pods);
      if (a.ended) throw new RunnerError(`upload job ${name} ended (${a.ended}) before it received the upload`);
      if (a.ip && (await ready(a.ip, this.#port(), token))) return a.ip;
      if (performance.now() > end) throw new FilesTimeoutError(name);
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  }
}

export function ready(ip: string, port: number, token: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = http.request({ host: ip, port, path: '/ready', method: 'GET', headers: { authorization: `Bearer ${token}` }, agent: false, timeout: 1_000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
    req.end();
  });
}

/**
 * Writes `body` to `req`, pausing while the socket's buffer is full (the receiver's disk sets the
 * pace), and checks the count on the way: the latest chunk is held back until the next one (or
 * the end) shows the count is still right, so a body longer or shorter than `size` never reaches
 * the receiver whole; it sees the request broken off and lands nothing. Ends `req` on success.
 * Stops early (without error) once `stop` is set: the receiver answered before reading it all.
 */
/** A receiver's answer to `req`: its status and the first `maxBytes` of its body as text. */
export function answerOf(req: http.ClientRequest, maxBytes: number): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let n = 0;
      res.on('data', (c: Buffer) => {
        n += c.length;
        if (n <= maxBytes) chunks.push(c);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

export async function streamBody(req: http.ClientRequest, body: UploadBody, size: number, signal: AbortSignal, stopped: () => boolean): Promise<void> {
  const reader = body ? (body as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]() : undefined;
  let got = 0;
  let held: Uint8Array | undefined;
  const write = async (chunk: Uint8Array) => {
    if (req.destroyed) return;
    if (!req.write(chunk) && !req.destroyed) {
      await new Promise<void>((resolve, reject) => {
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
  };
  try {
    for (;;) {
      signal.throwIfAborted();
      if (stopped() || req.destroyed) {
        // The answer is in: the rest of the body is not wanted, and the connection is done.
        req.destroy();
        await reader?.return?.().catch(() => {});
        return;
      }
      const r = reader ? await reader.next() : { done: true as const, value: undefined };
      if (r.done) break;
      got += r.value.length;
      if (got > size) throw new ApiError(413, 'too_large', `the body is longer than its Content-Length of ${size} bytes`);
      if (held) await write(held);
      held = r.value;
    }
    if (got !== size) throw shortBody(size);
    if (held) await write(held);
    req.end();
  } catch (e) {
    await reader?.return?.().catch(() => {});
    throw e;
  }
}

interface SendOptions {
  ip: string;
  port: number;
  token: string;
  upload: SingleUpload;
  body: UploadBody;
  signal: AbortSignal;
}

/** PUTs the body to the receiver and turns its answer into the caller's: a SHA-256 or an error. */
export async function sendBody(o: SendOptions): Promise<{ sha256: string }> {
  const u = o.upload;
  const q = new URLSearchParams({ path: u.path, size: String(u.size), sha256: u.sha256 });
  if (u.overwrite) q.set('overwrite', 'true');
  let answer!: { status: number; text: string };
  const req = http.request({
    host: o.ip,
    port: o.port,
    path: `/upload?${q}`,
    method: 'PUT',
    agent: false,
    headers: { authorization: `Bearer ${o.token}`, 'content-length': String(u.size), 'content-type': 'application/octet-stream' },
  });
  const answered = answerOf(req, 64 << 10).then((a) => void (answer = a));
  // The receiver starts its landing on the headers, so a body that then breaks off ends it at once.
  req.flushHeaders();
  await new Promise<void>((resolve) => {
    req.once('socket', (s) => (s.connecting ? s.once('connect', () => resolve()) : resolve()));
    req.once('error', () => resolve());
  });
  let sendError: unknown;
  let answeredEarly = false;
  void answered.then(
    () => (answeredEarly = true),
    () => {},
  );
  try {
    // The receiver may answer (a refusal) before it has read the body: then the rest is not sent.
    await streamBody(req, o.body, u.size, o.signal, () => answeredEarly);
  } catch (err) {
    sendError = err;
    req.destroy();
  }
  try {
    await answered;
  } catch (err) {
    if (sendError instanceof ApiError) throw sendError;
    if (o.signal.aborted || sendError) throw shortBody(u.size);
    throw new RunnerError(`upload to ${o.ip}: ${(err as Error).message}`, { cause: err });
  }
  if (answer.status === 200) {
    const r = checkResult(parseResultPayload(answer.text));
    if (!r.sha256) throw new RunnerError('the receiver answered no sha256');
    return { sha256: r.sha256 };
  }
  if (sendError instanceof ApiError) throw sendError;
  if (answer.status === 422) {
    const t = JSON.parse(answer.text) as { transfer: string; error: string };
    if (t.transfer === 'digest') throw new ApiError(400, 'digest_mismatch', 'the body does not match its Content-Digest; nothing was changed');
    if (t.transfer === 'long') throw new ApiError(413, 'too_large', `the body is longer than its Content-Length of ${u.size} bytes`);
    throw shortBody(u.size);
  }
  throw new RunnerError(`the receiver answered ${answer.status}: ${answer.text.slice(0, 200)}`);
}
