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
import { DomainError, domainError } from '../errors.ts';
import { newOpId } from '../files/editor.ts';
import { FileEditError } from '../files/errors.ts';
import { checkResult } from '../files/result-check.ts';
import { filesJobName } from '../job-spec/render.ts';
import { callerTrash } from '../job-spec/trash.ts';
import type { JobSettings, Target } from '../job-spec/types.ts';
import { RECEIVE_PORT, renderReceiverJob } from '../job-spec/upload-job.ts';
import { describeKubeError, isAlreadyExists } from '../kube/errors.ts';
import { callableAddress } from '../kube/job-facts.ts';
import { waitJobsFinished } from '../kube/job-wait.ts';
import { FILES_CONTAINER, LABEL_FILES_OP } from '../labels.ts';
import { isEditErrorKind } from '../protocol/edit-codes.ts';
import { jobToken, readKey, tokenDigest } from '../protocol/job-token.ts';
import { untilAnswers } from '../protocol/pod-listen.ts';
import { PodStreamError, type StreamBody, shortBody, streamToPod } from '../protocol/pod-stream.ts';
import { parseResultPayload } from '../protocol/result-parse.ts';
import { FilesTimeoutError, RunnerError } from '../runner/errors.ts';
import { sleep } from '../sleep.ts';
import { DEFAULT_BODY_IDLE_SECONDS } from './config.ts';

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
export function jobsFinished(api: Pick<ReceiverApi, 'listJobs'>, namespace: string, selector: string, ms: number): Promise<V1Job[]> {
  return waitJobsFinished({ list: () => api.listJobs(namespace, selector).catch(() => undefined), endAt: performance.now() + ms });
}

export interface UploadSettings {
  /** The shared key the receivers' tokens are derived from. */
  keyFile: string;
  /** How long a request waits for its receiver to listen (→ 504 files_timeout). */
  startTimeoutMs: number;
  /** How long the caller may pause its body (→ 408 upload_stalled); default 30 s. */
  bodyIdleMs?: number;
}

/**
 * A request's body: the Node request itself when the function runs on Node's HTTP server (no web
 * stream in between), else the Fetch body (route tests). Either is read once, in order.
 */
export type UploadBody = StreamBody;

/** The body of a Hono request, preferring the untouched Node request under @hono/node-server. */
export function uploadBody(c: { env: unknown; req: { raw: Request } }): UploadBody {
  const incoming = (c.env as { incoming?: http.IncomingMessage } | undefined)?.incoming;
  if (incoming && typeof incoming.readableDidRead === 'boolean' && !incoming.readableDidRead) return incoming;
  return c.req.raw.body;
}

export interface SingleUpload {
  path: string;
  size: number;
  /** Lowercase hex; absent (a signed URL's PUT), the receiver computes it and checks none. */
  sha256?: string;
  overwrite: boolean;
  /** Make the missing folders of `path` first (`parents=true`); only sent when set. */
  parents?: boolean;
}

/** A multipart/form-data body whose `files` parts land in the folder `path` (a signed URL's POST). */
export interface FormUpload {
  path: string;
  /** The body's `Content-Length`. */
  size: number;
  /** The caller's `Content-Type`, with its boundary. */
  contentType: string;
  overwrite: boolean;
  parents?: boolean;
}

export interface PlacedFile {
  path: string;
  sha256: string;
  size: number;
}

export interface FormPlaced {
  files: PlacedFile[];
  /** Why it stopped before the end of the form; the files before stay placed. */
  refusal?: Error;
}

/**
 * A signed upload URL's use: its receiver Job is named from the ticket (`opId`), so a second use's
 * create is refused by the API server, and kept `keepSeconds` after it ends (until the ticket
 * expires), so it cannot be garbage-collected while the ticket is still good.
 */
export interface TicketClaim {
  opId: string;
  keepSeconds: number;
}

/** What the upload routes need (UploadReceivers, or a fake in route tests). */
export interface UploadChannel {
  /** Lands the body at the path; answers its SHA-256, or throws the caller's error. */
  single(t: Target, u: SingleUpload, body: UploadBody, signal: AbortSignal, claim?: TicketClaim): Promise<Placed>;
  /**
   * Lands each `files` part of a form in the folder; answers what was placed and, when a part
   * stopped it early, the caller's error (naming what was placed before it, which stays).
   */
  form(t: Target, f: FormUpload, body: UploadBody, signal: AbortSignal, claim: TicketClaim): Promise<FormPlaced>;
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
/** How long a receiver with an address is asked for `/ready` before its Pod is listed again. */
export const READY_WAIT_MS = 1_000;

export { shortBody };

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

  async single(t: Target, u: SingleUpload, body: UploadBody, signal: AbortSignal, claim?: TicketClaim): Promise<Placed> {
    return this.#received(t, signal, claim, (ip, token) => sendBody({ ip, port: this.#port(), token, upload: u, body, signal, idleMs: this.#cfg.bodyIdleMs ?? DEFAULT_BODY_IDLE_SECONDS * 1000 }));
  }

  async form(t: Target, f: FormUpload, body: UploadBody, signal: AbortSignal, claim: TicketClaim): Promise<FormPlaced> {
    return this.#received(t, signal, claim, (ip, token) => sendForm({ ip, port: this.#port(), token, form: f, body, signal, idleMs: this.#cfg.bodyIdleMs ?? DEFAULT_BODY_IDLE_SECONDS * 1000 }));
  }

  /** Creates a one-upload receiver Job, waits until it listens, and runs `send` against it. */
  async #received<T>(t: Target, signal: AbortSignal, claim: TicketClaim | undefined, send: (ip: string, token: string) => Promise<T>): Promise<T> {
    const key = this.#o.key ?? readKey(this.#cfg.keyFile);
    const opId = claim?.opId ?? `u${(this.#o.newId ?? newOpId)().slice(1)}`;
    const name = filesJobName(t.server, opId);
    const token = jobToken(key, name);
    const job = renderReceiverJob({
      ...this.#settings,
      ...(claim ? { ttlSeconds: Math.max(this.#settings.ttlSeconds, claim.keepSeconds) } : {}),
      server: t.server,
      opId,
      worldPvc: t.world.claim,
      nodeName: t.world.node,
      tokenSha256: tokenDigest(token),
      once: true,
      ...(this.#settings.trash ? { trash: callerTrash(this.#settings.trash) } : {}),
      idleSeconds: SINGLE_IDLE_SECONDS,
      lifetimeSeconds: SINGLE_LIFETIME_SECONDS,
    });
    try {
      await this.#api.createJob(this.#settings.namespace, job);
    } catch (err) {
      // The ticket's Job exists: the URL was used (or is being used) already.
      if (claim && isAlreadyExists(err)) throw domainError('upload_url_used', 'this upload link was already used; ask for a new one');
      throw new RunnerError(`create upload job ${name}: ${describeKubeError(err)}`, { cause: err });
    }
    try {
      const ip = await this.#ready(name, opId, token, signal);
      return await send(ip, token);
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
      // Its address comes before its program listens: ask the program again before listing again.
      const ip = a.ip;
      if (ip && (await untilAnswers(() => ready(ip, this.#port(), token), READY_WAIT_MS, end, signal))) return ip;
      if (performance.now() > end) throw new FilesTimeoutError(name);
      await sleep(POLL_MS, signal);
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

interface SendOptions {
  ip: string;
  port: number;
  token: string;
  upload: SingleUpload;
  body: UploadBody;
  signal: AbortSignal;
  /** The caller may pause its body this long (408 upload_stalled past it). */
  idleMs?: number;
}

/** PUTs the body to the receiver and turns its answer into the caller's: a SHA-256 or an error. */
/** What a receiver placed: the digest of the bytes on disk, and of the bytes sent when those differ. */
export interface Placed {
  sha256: string;
  sent?: string;
}

export async function sendBody(o: SendOptions): Promise<Placed> {
  const u = o.upload;
  const q = new URLSearchParams({ path: u.path, size: String(u.size), ...(u.sha256 ? { sha256: u.sha256 } : {}) });
  if (u.overwrite) q.set('overwrite', 'true');
  if (u.parents) q.set('parents', 'true');
  let answer: { status: number; text: string };
  try {
    answer = await streamToPod({
      host: o.ip,
      port: o.port,
      method: 'PUT',
      path: `/upload?${q}`,
      headers: { authorization: `Bearer ${o.token}`, 'content-type': 'application/octet-stream' },
      body: { stream: o.body, size: u.size },
      signal: o.signal,
      maxAnswerBytes: 64 << 10,
      idleMs: o.idleMs,
    });
  } catch (err) {
    if (err instanceof PodStreamError) throw new RunnerError(`upload to ${o.ip}: ${err.message}`, { cause: err });
    throw err;
  }
  if (answer.status === 200) {
    const r = checkResult(parseResultPayload(answer.text));
    if (!r.sha256) throw new RunnerError('the receiver answered no sha256');
    // content_sha256: what was sent, when the bytes placed differ (server.properties kept its redacted values).
    return { sha256: r.sha256, ...(r.content_sha256 ? { sent: r.content_sha256 } : {}) };
  }
  if (answer.status === 422) {
    const t = JSON.parse(answer.text) as { transfer: string; error: string };
    if (t.transfer === 'digest') throw domainError('digest_mismatch', 'the body does not match its Content-Digest; nothing was changed');
    if (t.transfer === 'long') throw domainError('too_large', `the body is longer than its Content-Length of ${u.size} bytes`);
    throw shortBody(u.size);
  }
  throw new RunnerError(`the receiver answered ${answer.status}: ${answer.text.slice(0, 200)}`);
}

interface FormSendOptions extends Omit<SendOptions, 'upload'> {
  form: FormUpload;
}

interface FormAnswer {
  files: PlacedFile[];
  refused?: { code: string; error: string };
  transfer?: { reason: string; error: string };
}

/** What was placed before a refusal, for its message: those files stay. */
function placedBefore(files: PlacedFile[]): string {
  if (files.length === 0) return 'nothing was placed';
  return `placed before it, and kept: ${files.map((f) => f.path).join(', ')}`;
}

/** POSTs a form to the receiver; answers the files placed, and the caller's error if one stopped it. */
export async function sendForm(o: FormSendOptions): Promise<FormPlaced> {
  const f = o.form;
  const q = new URLSearchParams({ path: f.path });
  if (f.overwrite) q.set('overwrite', 'true');
  if (f.parents) q.set('parents', 'true');
  let answer: { status: number; text: string };
  try {
    answer = await streamToPod({
      host: o.ip,
      port: o.port,
      method: 'POST',
      path: `/form?${q}`,
      headers: { authorization: `Bearer ${o.token}`, 'content-type': f.contentType },
      body: { stream: o.body, size: f.size },
      signal: o.signal,
      maxAnswerBytes: 1 << 20,
      idleMs: o.idleMs,
    });
  } catch (err) {
    if (err instanceof PodStreamError) throw new RunnerError(`upload to ${o.ip}: ${err.message}`, { cause: err });
    throw err;
  }
  if (answer.status !== 200) throw new RunnerError(`the receiver answered ${answer.status}: ${answer.text.slice(0, 200)}`);
  const a = JSON.parse(answer.text) as FormAnswer;
  return { files: a.files, ...(formRefusal(a) ? { refusal: formRefusal(a) } : {}) };
}

/** The caller's error for a form the receiver stopped early, or undefined. */
function formRefusal(a: FormAnswer): Error | undefined {
  const placed = placedBefore(a.files);
  if (a.refused?.code === 'form') return domainError('bad_request', `${a.refused.error}; ${placed}`);
  if (a.refused) return new FileEditError(isEditErrorKind(a.refused.code) ? a.refused.code : 'bad_path', `${a.refused.error}; ${placed}`);
  if (a.transfer?.reason === 'long') return domainError('too_large', `${a.transfer.error}; ${placed}`);
  if (a.transfer) return new DomainError('upload_incomplete', 'invalid', `${a.transfer.error}; ${placed}`);
  return undefined;
}
