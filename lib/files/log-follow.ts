/**
 * A log follow, function side: the follow Job (a tail with `--follow`, created by the runner,
 * which also reads its log) serves the file's lines on its Pod address to the bearer of its token
 * (functions/files-tail/job/follow-serve.ts). Its Pod is found by its op-id label with `pods list`
 * and asked with the token (lib/files/serving-pod.ts); the answer, NDJSON lines, is handed back
 * unread for the route to relay. A Job that refuses (a missing file, a folder, the withheld file)
 * prints its result line and ends without serving: the runner reads it, and it is thrown as the
 * tail's own error. How many follows of a server run at once is counted from their unfinished Jobs
 * (their label), not kept in memory. Verbs: `jobs create, list`, `pods list`, `pods/log get`.
 * @module
 */
import type http from 'node:http';
import type { V1Job } from '@kubernetes/client-node';
import { FOLLOW_MAX_PER_SERVER, FOLLOW_PATH } from '../../functions/files-tail/op.ts';
import { decodeTail } from '../../functions/files-tail/result.ts';
import { DomainError } from '../errors.ts';
import { jobFinished } from '../kube/job-facts.ts';
import { LABEL_FILES_FOLLOW, LABEL_FILES_OP, LABEL_SERVER } from '../labels.ts';
import { parseResultPayload } from '../protocol/result-parse.ts';
import { FilesTimeoutError, RunnerError } from '../runner/errors.ts';
import { askPod, type PodLister, PodTimeoutError, waitForPodAddress } from './serving-pod.ts';

/** When a follow refused as `follow_limit` may try again: a follow ends when its caller hangs up, or at 10 minutes. */
export const FOLLOW_RETRY_AFTER_SECONDS = 30;

/** Already the most follows of this server running (→ 429 follow_limit with Retry-After). */
export class FollowLimitError extends DomainError {
  constructor(running: number) {
    super('follow_limit', 'busy', `${running} log follows of this server are running, the most that may; retry once one has ended`, { retryAfterSeconds: FOLLOW_RETRY_AFTER_SECONDS });
    this.name = 'FollowLimitError';
  }
}

/** No job key: no token the follow Job could check (→ 503 follow_unavailable). */
export class FollowUnavailableError extends DomainError {
  constructor() {
    super('follow_unavailable', 'unavailable', 'following a log is not available: the job key (FELIS_JOB_KEY_FILE) is not configured');
    this.name = 'FollowUnavailableError';
  }
}

/** The selector of a server's follow Jobs. */
export const followSelector = (server: string) => `${LABEL_SERVER}=${server},${LABEL_FILES_FOLLOW}=true`;

const unfinishedFollows = (jobs: V1Job[]) => jobs.filter((j) => j.metadata?.labels?.[LABEL_FILES_FOLLOW] === 'true' && !jobFinished(j));

/** Refuses a new follow when the server already has FOLLOW_MAX_PER_SERVER unfinished follow Jobs. */
export function checkFollowRoom(jobs: V1Job[], max = FOLLOW_MAX_PER_SERVER): void {
  const running = unfinishedFollows(jobs).length;
  if (running >= max) throw new FollowLimitError(running);
}

/**
 * After its Job serves: refuses the follow `job` when it is not among the `max` oldest unfinished
 * follow Jobs (creation time, then name). Callers that passed `checkFollowRoom` at the same moment
 * all see the same Jobs in the same order, so the newest of them give way and at most `max` stay.
 */
export function checkFollowKept(jobs: V1Job[], job: string, max = FOLLOW_MAX_PER_SERVER): void {
  const at = (j: V1Job) => (j.metadata?.creationTimestamp ? new Date(j.metadata.creationTimestamp).getTime() : Number.MAX_SAFE_INTEGER);
  const name = (j: V1Job) => j.metadata?.name ?? '';
  const order = unfinishedFollows(jobs).sort((a, b) => at(a) - at(b) || (name(a) < name(b) ? -1 : name(a) > name(b) ? 1 : 0));
  const place = order.findIndex((j) => name(j) === job);
  if (place >= max) throw new FollowLimitError(order.length - 1);
}

export interface OpenFollow {
  pods: PodLister;
  namespace: string;
  /** The Job's name (messages, 504) and op id (its Pod's label). */
  job: string;
  opId: string;
  token: string;
  port: number;
  /** Creates the Job and reads its log to its first result line (the runner's run). */
  run: (signal: AbortSignal) => Promise<string>;
  /** How long the Job has to serve. */
  timeoutMs: number;
  /** The caller going away: ends the wait, and later the stream (the Job sees the hang-up). */
  signal: AbortSignal;
}

type First = { kind: 'served'; res: http.IncomingMessage } | { kind: 'unserved'; err: unknown } | { kind: 'result'; payload: string } | { kind: 'run_failed'; err: unknown };

/**
 * The follow Job's answer (200, NDJSON), or the tail's error when the Job refused before serving.
 * The stream belongs to the caller from then on: `signal` ends it.
 */
export async function openFollow(o: OpenFollow): Promise<http.IncomingMessage> {
  const deadline = Date.now() + o.timeoutMs;
  const stopRun = new AbortController();
  const stopReach = new AbortController();
  const ran = o.run(AbortSignal.any([stopRun.signal, o.signal, AbortSignal.timeout(o.timeoutMs)]));
  const reached = (async () => {
    const reach = AbortSignal.any([stopReach.signal, o.signal]);
    const ip = await waitForPodAddress(o.pods, o.namespace, `${LABEL_FILES_OP}=${o.opId}`, 'follow', deadline, reach);
    return askPod({ ip, port: o.port, path: FOLLOW_PATH, token: o.token, what: 'follow' }, deadline, reach);
  })();
  const first = await Promise.race<First>([
    reached.then(
      (res) => ({ kind: 'served', res }),
      (err: unknown) => ({ kind: 'unserved', err }),
    ),
    ran.then(
      (payload) => ({ kind: 'result', payload }),
      (err: unknown) => ({ kind: 'run_failed', err }),
    ),
  ]);
  if (first.kind === 'served') {
    // The result line comes only once the follow is over: nobody waits for it.
    stopRun.abort();
    ran.catch(() => {});
    const res = first.res;
    if (res.statusCode === 200) return res;
    res.resume();
    throw new RunnerError(`the follow job ${o.job} refused its caller: ${res.statusCode}`);
  }
  stopReach.abort();
  reached.catch(() => {});
  if (o.signal.aborted) throw o.signal.reason;
  if (first.kind === 'unserved') {
    if (first.err instanceof PodTimeoutError) {
      stopRun.abort();
      throw new FilesTimeoutError(o.job);
    }
    // It ended before serving: its result line says why (a refusal is the tail's error).
    return refusal(o.job, await ran);
  }
  if (first.kind === 'result') return refusal(o.job, first.payload);
  throw first.err;
}

/** A result line from a follow Job that did not serve: a refusal throws as the tail's; anything else is ours. */
function refusal(job: string, payload: string): never {
  decodeTail(parseResultPayload(payload));
  throw new RunnerError(`the follow job ${job} ended before serving`);
}
