/**
 * How a background op stands, read from its Job, its newest Pod and the tail of that Pod's log.
 * The printed result decides the outcome whatever the Job's condition says (a Job stopped at its
 * deadline just after printing did finish its work); a Job that ended without one failed, and the
 * reason says how: the condition's reason, or OOMKilled when the kernel killed the `files`
 * container for memory (the Job's condition cannot tell that), or the Pod's own reason
 * (`NodeRestarted`, `Evicted`) over the Job's `BackoffLimitExceeded`, which only says that the Pod
 * failed. Whether such an op may have changed the world is `outcomeUnknown`: it may have, unless
 * its `files` container is known never to have run. Pure: no I/O.
 * @module
 */
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import { ANNOTATION_FILES_PATH, ANNOTATION_PULL_PLACED, ANNOTATION_RECOVERED, ANNOTATION_RECOVERED_BY, FILES_CONTAINER, fileOpOf, LABEL_FILES_OP, LABEL_UPLOAD_SESSION } from '../labels.ts';
import { OP_ID, type RecoveredNow, recoveredIn } from '../protocol/recovered.ts';
import { lastProgress, lastResultPayload, type Result } from '../protocol/result.ts';
import { parseResultPayload } from '../protocol/result-parse.ts';

export type OpStateName = 'running' | 'succeeded' | 'failed';

/** The reason of an op whose `files` container was killed for going over its memory limit. */
export const REASON_OOM_KILLED = 'OOMKilled';
/** The reason of a Job that completed but printed no readable result: nobody can tell how it went. */
export const REASON_RESULT_UNAVAILABLE = 'ResultUnavailable';
/** The reason of a failed Job whose condition gave none. */
export const REASON_FAILED = 'Failed';

export interface OpState {
  id: string;
  op: string;
  path: string;
  state: OpStateName;
  /** The Job's creation time. */
  started: Date | undefined;
  /** When the Job's terminal condition became True; undefined while running. */
  finished: Date | undefined;
  done: number;
  total: number;
  /** The printed result, once ended with one that parses. */
  result: Result | undefined;
  /** Why a failed op without a result failed; empty otherwise. */
  reason: string;
  /**
   * A failed op without a result that may have run (and changed files) before it stopped, or that
   * ended well but whose result cannot be read: nobody can say how it went. False when its `files`
   * container never ran, for an OOM kill, and for every op with a result.
   */
  outcomeUnknown: boolean;
  /**
   * What a later op found of this one when it recovered the world after it (its journal): the tree
   * it left is the op's result (`new`) or the tree before it (`old`), or its destination was gone.
   * Only for an op whose own result was never printed.
   */
  recovered?: Recovery;
}

/** What the op that recovered a world made of an interrupted op. */
export interface Recovery {
  now: RecoveredNow;
  /** The op id of the op whose Job did it. */
  by: string;
}

const SUCCEEDED = new Set(['Complete', 'SuccessCriteriaMet']);
const FAILED = new Set(['Failed', 'FailureTarget']);

function time(v: Date | string | undefined): Date | undefined {
  if (v === undefined) return undefined;
  const d = v instanceof Date ? v : new Date(v);
  return Number.isNaN(d.getTime()) ? undefined : d;
}

/**
 * The op a background Job is part of, as callers name it: an upload session's receivers (one at a
 * time, a new one each time a lost receiver is resumed, each with a `files-op` of its own, since a
 * Job's name is made from it) are one op whose id is the session's; any other Job is one op whose
 * id is its `files-op` label.
 */
export function opIdOf(job: V1Job): string {
  const labels = job.metadata?.labels ?? {};
  return labels[LABEL_UPLOAD_SESSION] || (labels[LABEL_FILES_OP] ?? '');
}

/** The newest Pod of each op id (label `files-op`): a Job retried by hand may have had several. */
export function newestPodPerOp(pods: V1Pod[]): Map<string, V1Pod> {
  const out = new Map<string, V1Pod>();
  for (const pod of pods) {
    const id = pod.metadata?.labels?.[LABEL_FILES_OP] ?? '';
    const cur = out.get(id);
    const t = time(pod.metadata?.creationTimestamp)?.getTime() ?? 0;
    if (!cur || t > (time(cur.metadata?.creationTimestamp)?.getTime() ?? 0)) out.set(id, pod);
  }
  return out;
}

/** Whether the `files` container (no other) was terminated for going over its memory limit. */
export function killedForMemory(pod: V1Pod | undefined): boolean {
  return (pod?.status?.containerStatuses ?? []).some((cs) => cs.name === FILES_CONTAINER && cs.state?.terminated?.reason === REASON_OOM_KILLED);
}

/** Terminations of a container that was never run: its program did not start. */
const NEVER_RAN = new Set(['StartError', 'ContainerCannotRun', 'CreateContainerError']);

/**
 * Whether the `files` container may have run: true unless the Pod shows it never did (waiting,
 * or a start that failed, with no earlier run). Without a Pod (deleted at the deadline, lost with
 * its node) nobody can tell, which counts as may have.
 */
export function filesMayHaveRun(pod: V1Pod | undefined): boolean {
  if (!pod) return true;
  const cs = (pod.status?.containerStatuses ?? []).find((c) => c.name === FILES_CONTAINER);
  if (!cs) return false;
  if (cs.lastState?.terminated || cs.state?.running) return true;
  const t = cs.state?.terminated;
  if (t) return !NEVER_RAN.has(t.reason ?? '');
  return false;
}

/**
 * The recovery recorded on a Job (the annotations the runner puts there when a later op's Job
 * reported it: lib/runner/sync-runner.ts), if any.
 */
export function recoveryOnJob(job: V1Job): Recovery | undefined {
  const a = job.metadata?.annotations ?? {};
  const now = a[ANNOTATION_RECOVERED];
  const by = a[ANNOTATION_RECOVERED_BY] ?? '';
  if ((now === 'new' || now === 'old' || now === 'gone') && OP_ID.test(by)) return { now, by };
  return undefined;
}

/** A stop while the op staged: it removed what it had staged and said so in its own log. */
function ownUndo(id: string, log: string): Recovery | undefined {
  return recoveredIn(log).some((r) => r.op === id && r.now === 'old') ? { now: 'old', by: id } : undefined;
}

/**
 * `recovery`: what a later op reported of this one, if known (from the Job's annotations, or the
 * log of a later op in the same listing); it decides an outcome the op could not report itself.
 */
export function opState(job: V1Job, pod: V1Pod | undefined, log: string, recovery?: Recovery): OpState {
  const labels = job.metadata?.labels ?? {};
  const st: OpState = {
    id: opIdOf(job),
    op: fileOpOf(labels),
    path: job.metadata?.annotations?.[ANNOTATION_FILES_PATH] ?? '',
    state: 'running',
    started: time(job.metadata?.creationTimestamp),
    finished: undefined,
    done: 0,
    total: 0,
    result: undefined,
    reason: '',
    outcomeUnknown: false,
  };
  const p = lastProgress(log);
  if (p) {
    st.done = p.done;
    st.total = p.total;
  }
  // Only True conditions count; when several are True the last one listed decides.
  let ended = false;
  let completed = false;
  let reason = '';
  for (const c of job.status?.conditions ?? []) {
    if (c.status !== 'True') continue;
    if (SUCCEEDED.has(c.type)) {
      ended = true;
      completed = true;
      reason = REASON_RESULT_UNAVAILABLE;
      st.finished = time(c.lastTransitionTime);
    } else if (FAILED.has(c.type)) {
      ended = true;
      completed = false;
      reason = c.reason ?? '';
      st.finished = time(c.lastTransitionTime);
    }
  }
  if (!ended) return st;

  const payload = lastResultPayload(log);
  if (payload !== undefined) {
    try {
      st.result = parseResultPayload(payload);
    } catch {
      // A truncated or garbled result line is no result.
    }
  }
  if (st.result?.staged && st.op === 'pull') {
    // Downloaded, not yet placed: the op runs until the placing pass records how its placement went.
    const placed = placement(job);
    if (!placed) return { ...st, state: 'running', finished: undefined, result: undefined };
    st.result = placed;
  }
  if (st.result) {
    st.state = st.result.code ? 'failed' : 'succeeded';
    return st;
  }
  st.state = 'failed';
  if (killedForMemory(pod)) {
    // Known well enough to act on: the archive is too big for the memory limit.
    st.reason = REASON_OOM_KILLED;
    return st;
  }
  // The program exits 0 only after printing its result: a completed Job did its work, unread.
  st.reason = completed ? reason : podReason(pod) || reason || REASON_FAILED;
  st.outcomeUnknown = completed || filesMayHaveRun(pod);
  const rec = recovery ?? recoveryOnJob(job) ?? ownUndo(labels[LABEL_FILES_OP] ?? '', log);
  if (st.outcomeUnknown && rec) {
    // Its journal told the next op how to finish it: all of it is in place (new) or none (old, gone).
    st.recovered = rec;
    st.outcomeUnknown = false;
    if (rec.now === 'new') st.state = 'succeeded';
  }
  return st;
}

/**
 * How a pull's placement went, as the placing pass recorded it on the pull's Job
 * (lib/maintenance/pull-placement.ts); undefined while none is recorded. A record that cannot be
 * read says so rather than leave the op running for ever.
 */
export function placement(job: V1Job): Result | undefined {
  const text = job.metadata?.annotations?.[ANNOTATION_PULL_PLACED];
  if (text === undefined) return undefined;
  try {
    return parseResultPayload(text);
  } catch {
    return { code: 'outcome_unknown', error: 'how the pulled file was placed cannot be read from its Job; look for the file before pulling it again' };
  }
}

/** The Pod's own failure reason (`NodeRestarted`, `Evicted`), when it has a well-formed one. */
function podReason(pod: V1Pod | undefined): string {
  const r = pod?.status?.reason;
  return typeof r === 'string' && /^[A-Za-z][A-Za-z0-9]{0,63}$/.test(r) ? r : '';
}
