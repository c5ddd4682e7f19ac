/**
 * Upload sessions, function side. A session is one receiver Job at a time (labelled with the
 * session id) whose Pod holds the session's state on the world volume; the function keeps nothing.
 * The receiver holds nothing by itself: a call that changes the world (begin, part, commit, cancel)
 * is made by a route holding a ticket of the world's line and carries that lock
 * (lib/protocol/session-lock.ts), which the receiver checks.
 * Each call finds the session's serving Pod with `pods list` and calls it with its Job's token.
 * When no Pod serves it (the receiver was lost, or reached its lifetime), a caller that may change
 * files (a part, a cancel, a commit) starts a new receiver for the same id, which resumes from the
 * disk (or answers 404 and ends when the disk holds no such session). An id no receiver Job was
 * ever made for is judged absent from the Job list alone: 404, and nothing is created. Verbs: `jobs create`, `jobs list` (a server's live sessions; is a
 * receiver on its way?), `pods list`.
 * @module
 */

import { randomBytes } from 'node:crypto';
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import { DomainError, domainError, type ErrorCode } from '../errors.ts';
import { filesJobName } from '../job-spec/render.ts';
import { callerTrash } from '../job-spec/trash.ts';
import type { JobSettings, Target } from '../job-spec/types.ts';
import { LABEL_FILES_RECEIVE, LABEL_UPLOAD_SESSION, RECEIVE_PORT, renderReceiverJob } from '../job-spec/upload-job.ts';
import { describeKubeError } from '../kube/errors.ts';
import { callableAddress, controllerJob, jobFinished, jobOutcome } from '../kube/job-facts.ts';
import { ANNOTATION_FILES_PATH, FILES_CONTAINER, LABEL_FILES_OP, LABEL_SERVER } from '../labels.ts';
import { type AsyncSettings, backgroundTtlSeconds } from '../ops/background.ts';
import { answerKind } from '../protocol/answer-kind.ts';
import { jobToken, readKey, tokenDigest } from '../protocol/job-token.ts';
import { untilAnswers } from '../protocol/pod-listen.ts';
import { PodStreamError, streamToPod } from '../protocol/pod-stream.ts';
import { SESSION_LOCK_HEADER } from '../protocol/session-lock.ts';
import { FilesTimeoutError, RunnerError } from '../runner/errors.ts';
import { sleep } from '../sleep.ts';
import { DEFAULT_BODY_IDLE_SECONDS, type UploadConfig } from './config.ts';
import { jobsFinished, READY_WAIT_MS, ready, type UploadBody } from './receiver.ts';

export interface SessionApi {
  createJob(namespace: string, job: V1Job): Promise<unknown>;
  listJobs(namespace: string, labelSelector: string): Promise<V1Job[]>;
  listPods(namespace: string, labelSelector: string): Promise<V1Pod[]>;
}

/**
 * One session per server: the staged bytes stay bounded by one file, and every writing call of the
 * session already waits its turn in the world's line with the server's other changes.
 */
export const MAX_SESSIONS_PER_SERVER = 1;
const POLL_MS = 40;
const ID = /^[0-9a-f]{32}$/;

/** A call to a session's receiver. `lock` gives the world lock its sender holds now, for a writing call. */
export interface SessionRequest {
  method: string;
  path: string;
  body?: { stream: UploadBody; size: number };
  lock?: () => string | undefined;
}

export interface PodAnswer {
  status: number;
  text: string;
  /** The op id (`files-op`) of the receiver Job that answered, when a session's receiver did. */
  opId?: string;
}

/** What the session routes need (UploadSessions, or a fake in route tests). */
export interface SessionChannel {
  newId(): string;
  /** Sessions of the server whose receiver has not ended. */
  active(server: string): Promise<number>;
  /**
   * Waits (at most `ms`) until the session's receiver has ended: after a refused begin, a commit,
   * a cancel (until then it counts as the server's session). Answers the session's Jobs as last seen.
   */
  ended(server: string, id: string, ms: number): Promise<V1Job[]>;
  /**
   * Creates a receiver Job for the session; the caller holds a ticket of the world's line, and keeps
   * it until its call is answered (the receiver's start reads and tidies the staging folders). `path`
   * is the session's file; a resumed session's receiver takes it from the session's earlier Jobs.
   */
  start(t: Target, id: string, path?: string): Promise<void>;
  /**
   * Calls the session's receiver. `resume` starts a new receiver when none serves (the caller holds
   * the world's line). A session that never had a Job is 404 upload_not_found, with no Job
   * created; one whose receivers have all ended is, without `resume` (a status call, which only
   * reads and takes no ticket: it must never start a receiver), answered by `endedAnswer`.
   */
  call(server: string, id: string, req: SessionRequest, signal: AbortSignal, resume?: () => Promise<void>): Promise<PodAnswer>;
}

export interface SessionOptions {
  key?: Buffer;
  port?: number | (() => number);
}

function serving(pods: V1Pod[]): { ip?: string; starting: boolean } {
  let starting = false;
  for (const p of pods) {
    if (p.metadata?.deletionTimestamp) continue;
    const phase = p.status?.phase ?? 'Pending';
    if (phase === 'Succeeded' || phase === 'Failed') continue;
    const ip = callableAddress(p, FILES_CONTAINER);
    if (ip) return { ip, starting };
    starting = true;
  }
  return { starting };
}

export const notFound = () => domainError('upload_not_found', 'no such upload session');
/**
 * A status call's answer when every receiver of the session has ended (the caller may not start
 * one). A receiver that ended by itself (its Job succeeded) committed, was cancelled, expired or
 * found no session: the session is gone, 404. (At its 6 h lifetime it also ends by itself and keeps
 * the session; a part or commit still resumes that one.) A receiver that was lost (its Job failed:
 * the Pod deleted, evicted or killed) left the session on the volume: 409 upload_paused.
 */
export function endedAnswer(jobs: V1Job[]): DomainError {
  const newest = jobs.reduce((a, b) => (new Date(b.metadata?.creationTimestamp ?? 0) > new Date(a.metadata?.creationTimestamp ?? 0) ? b : a));
  return jobOutcome(newest) === 'failed' ? paused() : domainError('upload_not_found', 'this upload session has ended (committed, cancelled or expired)');
}

/** The session had a receiver, all have ended, and the caller may not start one (a status call). */
export const paused = () =>
  domainError('upload_paused', 'this upload session has no running receiver; if it is still on the volume, its next part or commit resumes it and answers what it holds (else 404 upload_not_found)');

export class UploadSessions implements SessionChannel {
  readonly #api: SessionApi;
  readonly #settings: JobSettings & AsyncSettings;
  readonly #cfg: UploadConfig & { keyFile: string; startTimeoutMs: number };
  readonly #o: SessionOptions;

  constructor(api: SessionApi, settings: JobSettings & AsyncSettings, cfg: UploadConfig & { keyFile: string; startTimeoutMs: number }, o: SessionOptions = {}) {
    this.#api = api;
    this.#settings = settings;
    this.#cfg = cfg;
    this.#o = o;
  }

  newId(): string {
    return randomBytes(16).toString('hex');
  }

  #port(): number {
    const p = this.#o.port;
    return typeof p === 'function' ? p() : (p ?? RECEIVE_PORT);
  }

  async #jobs(selector: string): Promise<V1Job[]> {
    try {
      return await this.#api.listJobs(this.#settings.namespace, selector);
    } catch (err) {
      throw new RunnerError(`list upload session jobs: ${describeKubeError(err)}`, { cause: err });
    }
  }

  async active(server: string): Promise<number> {
    const selector = `${LABEL_SERVER}=${server},${LABEL_FILES_RECEIVE}=true,${LABEL_UPLOAD_SESSION}`;
    const jobs = (await this.#jobs(selector)).filter((j) => !jobFinished(j));
    if (jobs.length === 0) return 0;
    let pods: V1Pod[];
    try {
      pods = await this.#api.listPods(this.#settings.namespace, selector);
    } catch (err) {
      throw new RunnerError(`list upload session pods: ${describeKubeError(err)}`, { cause: err });
    }
    // A Job whose Pods have all ended is over even before its controller marks it finished.
    const live = jobs.filter((j) => {
      const mine = pods.filter((p) => controllerJob(p) === j.metadata?.name);
      return mine.length === 0 || mine.some((p) => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed');
    });
    return new Set(live.map((j) => j.metadata?.labels?.[LABEL_UPLOAD_SESSION])).size;
  }

  async ended(server: string, id: string, ms: number): Promise<V1Job[]> {
    // Until its Job is marked finished, the receiver still counts as the server's one session.
    return jobsFinished(this.#api, this.#settings.namespace, `${LABEL_SERVER}=${server},${LABEL_UPLOAD_SESSION}=${id}`, ms);
  }

  async start(t: Target, id: string, path?: string): Promise<void> {
    const key = this.#o.key ?? readKey(this.#cfg.keyFile);
    const opId = `s${randomBytes(8).toString('hex').slice(1)}`;
    const name = filesJobName(t.server, opId);
    path ??= (await this.#jobs(`${LABEL_SERVER}=${t.server},${LABEL_UPLOAD_SESSION}=${id}`)).map((j) => j.metadata?.annotations?.[ANNOTATION_FILES_PATH]).find((p) => p !== undefined && p !== '');
    const job = renderReceiverJob({
      ...this.#settings,
      // Kept after it ends as long as a background op is, so the ops listing shows how it went.
      ttlSeconds: backgroundTtlSeconds(this.#settings),
      server: t.server,
      path: path ?? '',
      opId,
      worldPvc: t.world.claim,
      nodeName: t.world.node,
      tokenSha256: tokenDigest(jobToken(key, name)),
      once: false,
      session: id,
      ...(this.#settings.trash ? { trash: callerTrash(this.#settings.trash) } : {}),
      idleSeconds: this.#cfg.idleSeconds,
      lifetimeSeconds: this.#cfg.lifetimeSeconds,
    });
    try {
      await this.#api.createJob(this.#settings.namespace, job);
    } catch (err) {
      throw new RunnerError(`create upload session job ${name}: ${describeKubeError(err)}`, { cause: err });
    }
  }

  async call(server: string, id: string, req: SessionRequest, signal: AbortSignal, resume?: () => Promise<void>): Promise<PodAnswer> {
    if (!ID.test(id)) throw notFound();
    const key = this.#o.key ?? readKey(this.#cfg.keyFile);
    const selector = `${LABEL_SERVER}=${server},${LABEL_UPLOAD_SESSION}=${id}`;
    const end = performance.now() + this.#cfg.startTimeoutMs;
    let resumed = false;
    for (;;) {
      signal.throwIfAborted();
      let pods: V1Pod[];
      try {
        pods = await this.#api.listPods(this.#settings.namespace, selector);
      } catch (err) {
        throw new RunnerError(`list upload session pods: ${describeKubeError(err)}`, { cause: err });
      }
      const s = serving(pods);
      const ip = s.ip;
      if (ip) {
        const pod = pods.find((p) => p.status?.podIP === ip)!;
        const token = jobToken(key, controllerJob(pod) ?? '');
        // Its address comes before its program listens: ask the program again before listing again.
        if (await untilAnswers(() => ready(ip, this.#port(), token), READY_WAIT_MS, end, signal))
          return { ...(await podCall(ip, this.#port(), token, req, signal, (this.#cfg.bodyIdleSeconds ?? DEFAULT_BODY_IDLE_SECONDS) * 1000)), opId: pod.metadata?.labels?.[LABEL_FILES_OP] };
      } else if (!s.starting) {
        // No receiver Pod: one is on its way (its Job is not finished yet), or the session is gone,
        // or its receiver was lost and the session waits on the disk. A session begins by creating
        // its receiver Job, so an id no Job carries was never begun: 404 without creating one. A
        // new receiver for an id that had one answers from the disk (404 when the disk no longer
        // holds the session) and then ends; only a caller allowed to change files may start it.
        const jobs = await this.#jobs(selector);
        if (jobs.length === 0) throw notFound();
        if (!jobs.some((j) => !jobFinished(j))) {
          if (resumed) throw notFound();
          if (!resume) throw endedAnswer(jobs);
          await resume();
          resumed = true;
        }
      }
      if (performance.now() > end) throw new FilesTimeoutError(`upload session ${id}`);
      await sleep(POLL_MS, signal);
    }
  }
}

/**
 * One call to a session receiver; a part's body is streamed with its length checked on the way. A
 * writing call carries the world lock its sender holds as it is sent (the line re-dates it while a
 * long call waits for a receiver to start).
 */
export async function podCall(ip: string, port: number, token: string, r: SessionRequest, signal: AbortSignal, idleMs?: number): Promise<PodAnswer> {
  const lock = r.lock?.();
  const headers: Record<string, string> = { authorization: `Bearer ${token}`, ...(lock ? { [SESSION_LOCK_HEADER]: lock } : {}) };
  try {
    return await streamToPod({
      host: ip,
      port,
      method: r.method,
      path: r.path,
      headers,
      ...(r.body ? { body: r.body } : {}),
      signal,
      maxAnswerBytes: 1 << 20,
      ...(idleMs !== undefined ? { idleMs } : {}),
    });
  } catch (err) {
    if (err instanceof PodStreamError) throw new RunnerError(`upload session call to ${ip}: ${err.message}`, { cause: err });
    throw err;
  }
}

/**
 * Whether a call to a receiver failed with no answer after it was sent: what it asked may still be
 * under way in the Pod (a commit placing the file), so its sender keeps the world held.
 */
export function answerLost(err: unknown): boolean {
  return err instanceof RunnerError && err.cause instanceof PodStreamError;
}

/** A receiver's refusal as the caller's error; anything unexpected is a 500 with its detail logged. */
export function answerOrThrow(a: PodAnswer, ok: number[]): unknown {
  let body: any;
  try {
    body = a.text === '' ? undefined : JSON.parse(a.text);
  } catch {
    throw new RunnerError(`the upload receiver answered ${a.status}: ${a.text.slice(0, 200)}`);
  }
  if (ok.includes(a.status)) return body;
  const kind = answerKind(a.status);
  if (body && typeof body.code === 'string' && kind) {
    // The receiver's own code, passed on as it came (its codes are in the catalogue, lib/errors.ts).
    throw new DomainError(body.code as ErrorCode, kind as never, String(body.error ?? body.code));
  }
  throw new RunnerError(`the upload receiver answered ${a.status}: ${a.text.slice(0, 200)}`);
}
