/**
 * A background op as the HTTP layer shows it: the JSON of the ops listing and of the 202 that
 * starts an op, with the Job's result codes mapped to the envelope codes the sync routes use and
 * a message that tells the caller what to do when the Job ended without a result. Pure.
 * @module
 */
import { EDIT_ERRORS, isEditErrorKind } from '../protocol/edit-codes.ts';
import type { RecoveredNow } from '../protocol/recovered.ts';
import type { Result } from '../protocol/result.ts';
import { type OpState, type OpStateName, REASON_OOM_KILLED, REASON_RESULT_UNAVAILABLE, type Recovery } from './state.ts';

/** The Pod reason of the Pods a node ended by restarting (the embedded cluster's, under `npm start`). */
const NODE_RESTARTED = 'NodeRestarted';

export interface OpError {
  code: string;
  message: string;
  entry?: string;
  conflicts?: string[];
  conflict_count?: number;
  need?: number;
  avail?: number;
}

export interface OpView {
  id: string;
  op: string;
  path: string;
  state: OpStateName;
  started_at: string;
  /** Absent while running. */
  finished_at?: string;
  done: number;
  total: number;
  /** Only on success, and only when non-zero. */
  files?: number;
  bytes?: number;
  /** A copy, on success: where it landed, and how many entries were left out (when any). */
  to?: string;
  skipped?: number;
  /** Only when failed. */
  error?: OpError;
  /** Only for an op stopped mid-way that a later op of the world finished (`new`) or undid. */
  recovered?: { now: RecoveredNow; by: string; message: string };
}

/** The code an op's failure shows when its Job printed no result and never ran its program. */
export const JOB_FAILED = 'job_failed';
/**
 * The code of an op that ended without a result it can show but may have run: it may have changed
 * files (all, some or none). Not a refusal: the caller is told to look, not to run it again
 * (which could refuse with `file_exists`, or do the work twice).
 */
export const OUTCOME_UNKNOWN = 'outcome_unknown';
/**
 * The code of an op stopped mid-way whose journal let the next op of the world put back what it had
 * placed: none of it is in the world, and running it again is safe.
 */
export const INTERRUPTED = 'interrupted';

/** Kubernetes times have whole seconds: RFC 3339 without a fraction, as Felis shows them. */
export function rfc3339(d: Date | undefined): string {
  return (d ?? new Date(0)).toISOString().replace(/\.\d+Z$/, 'Z');
}

/**
 * The envelope code of a result code: the three the sync routes rename (so one client handles both
 * the same way), the rest as the Job printed them.
 */
export function opErrorCode(code: string): string {
  if (code === 'exists' || code === 'no_space' || code === 'conflict') return EDIT_ERRORS[code].code;
  return code;
}

/** What to tell a caller whose op ended without a result and never ran, by the reason it ended. */
export function jobFailedMessage(reason: string): string {
  if (reason === 'DeadlineExceeded') return 'the file operation ran out of time before it started (DeadlineExceeded); nothing was changed: run it again';
  if (reason === REASON_OOM_KILLED) {
    return 'the file operation ran out of memory (OOMKilled); an archive of this many files has to be split into smaller ones';
  }
  return `the file operation did not start (${reason}); nothing was changed: run it again`;
}

const CHECK = 'the outcome is unknown: check the files before running it again';

/** What to tell a caller whose op may have run but whose outcome cannot be read. */
export function outcomeUnknownMessage(reason: string): string {
  if (reason === REASON_RESULT_UNAVAILABLE) return `the file operation ended, but its report cannot be read (${reason}); ${CHECK}`;
  if (reason === 'DeadlineExceeded') return `the file operation ran out of time (${reason}) before it could report how it went; ${CHECK}`;
  if (reason === NODE_RESTARTED) return `the service or its node restarted while the file operation ran (${reason}); ${CHECK}`;
  return `the file operation stopped before it could report how it went (${reason}); ${CHECK}`;
}

/** What became of an op stopped mid-way (`reason`), as the op that recovered the world reported it. */
export function recoveredMessage(reason: string, r: Recovery, id?: string): string {
  if (r.by === id) return `the file operation was stopped (${reason}) before it placed anything, and removed what it had staged: none of its files are in the world, so it can be run again`;
  const stopped = `the file operation was stopped before it could report how it went (${reason})`;
  if (r.now === 'new') return `${stopped}; op ${r.by} finished placing it: all of its files are in place`;
  if (r.now === 'old') return `${stopped}; op ${r.by} put back what it had placed: none of its files are in the world, so it can be run again`;
  return `${stopped}; its destination folder was removed before op ${r.by} could finish it: none of its files are in the world`;
}

function resultError(r: Result & { code: string }): OpError {
  const fallback = isEditErrorKind(r.code) ? EDIT_ERRORS[r.code].text : `the file operation refused (${r.code})`;
  const e: OpError = { code: opErrorCode(r.code), message: r.error || fallback };
  if (r.entry) e.entry = r.entry;
  if (r.conflicts?.length) e.conflicts = [...r.conflicts];
  if (r.conflict_count) e.conflict_count = r.conflict_count;
  if (r.need) e.need = r.need;
  if (r.avail) e.avail = r.avail;
  return e;
}

export function opView(s: OpState): OpView {
  const v: OpView = {
    id: s.id,
    op: s.op,
    path: s.path,
    state: s.state,
    started_at: rfc3339(s.started),
    ...(s.state !== 'running' && s.finished ? { finished_at: rfc3339(s.finished) } : {}),
    done: s.done,
    total: s.total,
  };
  if (s.state === 'succeeded') {
    if (s.result?.files) v.files = s.result.files;
    if (s.result?.bytes) v.bytes = s.result.bytes;
    if (s.result?.to) v.to = s.result.to;
    if (s.result?.skipped) v.skipped = s.result.skipped;
  }
  if (s.recovered) v.recovered = { now: s.recovered.now, by: s.recovered.by, message: recoveredMessage(s.reason, s.recovered, s.id) };
  if (s.state === 'failed') {
    if (s.result?.code) v.error = resultError(s.result as Result & { code: string });
    else if (s.recovered) v.error = { code: INTERRUPTED, message: recoveredMessage(s.reason, s.recovered, s.id) };
    else if (s.outcomeUnknown) v.error = { code: OUTCOME_UNKNOWN, message: outcomeUnknownMessage(s.reason) };
    else v.error = { code: JOB_FAILED, message: jobFailedMessage(s.reason) };
  }
  return v;
}

/** The answer to starting an op: running, nothing done yet, nothing else known. */
export function startedView(id: string, op: string, path: string, started: Date): OpView {
  return { id, op, path, state: 'running', started_at: rfc3339(started), done: 0, total: 0 };
}
