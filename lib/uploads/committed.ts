/**
 * The answer to a session's commit, in Felis's shape: 202 `{op}`, the upload as the ops listing
 * shows it. Felis's commit starts a Job that then fetches the bytes, so its op is still running;
 * here the bytes are already in place when the commit answers, so the op is derived (by the
 * listing's own rules) from the receiver's Job and the last lines it printed: its final progress
 * and the commit's Result. Pure.
 * @module
 */
import type { V1Job } from '@kubernetes/client-node';
import { LABEL_FILES_OP } from '../labels.ts';
import { opsOf } from '../ops/list.ts';
import { opState } from '../ops/state.ts';
import { type OpView, opView, startedView } from '../ops/view.ts';
import { formatProgressLine, formatResultLine, type Result } from '../protocol/result.ts';

/**
 * `session` is the session's id, which is its op's (lib/ops/state.ts `opIdOf`); `jobs` are its
 * Jobs as last listed; `opId` is the `files-op` of the receiver that committed. The op began with
 * the session's first receiver, as the listing says. Without that Job (its listing failed), the
 * view is a just-started op, as Felis answers: the listing tells the rest.
 */
export function committedOp(session: string, opId: string, path: string, size: number, result: Result, jobs: V1Job[], now: Date): OpView {
  const job = jobs.find((j) => j.metadata?.labels?.[LABEL_FILES_OP] === opId);
  if (!job) return startedView(session, 'upload', path, now);
  const began = opsOf(jobs).find((o) => o.id === session)?.started;
  const st = opState(job, undefined, formatProgressLine({ done: size, total: size }) + formatResultLine(result));
  const v = opView({ ...st, id: session, ...(began ? { started: new Date(began) } : {}) });
  // A receiver resumed with no earlier Job to take the path from carries none; the session knows it.
  return v.path ? v : { ...v, path };
}
