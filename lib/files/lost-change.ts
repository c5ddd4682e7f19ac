/**
 * What a caller is told when a change reached its program but no result came back: a one-shot Job
 * that ended without one, or an edit session whose call broke or answered 500 (JobLostError,
 * EditLostError). What can be known depends on the op, so it is said here, once:
 *
 * - a change made in one atomic step (a rename of a staged file over its target, a mkdir, a
 *   rename) is either not made or fully made: JobLostError's 500 `internal` says so;
 * - a many-file delete or move and a trash restore are journaled: until the next change of the
 *   world, which finishes or undoes them before anything else (all or nothing), the files may show
 *   part of it; a single delete (a folder removed in place without the trash) and a many-file
 *   chmod (one item at a time) may be made in part. Each is 503 `outcome_unknown` with the op's
 *   id (the Job's op-id label, the id its journal and recovery line carry), never "either not
 *   made or fully made", and never "retry": running it again could refuse with `not_found` or
 *   `file_exists`, or do the work twice.
 * @module
 */
import { DomainError } from '../errors.ts';
import type { Op } from '../protocol/ops.ts';
import { lostResultOf } from '../protocol/ops.ts';
import type { JobLostError } from '../runner/errors.ts';

const CHECK = 'check the files before running it again';

/** What the caller reads of a lost change of `op`. */
export function lostMessage(op: Op, opId: string): string {
  const lost = `the file operation ${opId} ended without a result, so its outcome is unknown`;
  // Journaled: the next change of the world finishes or undoes it before anything else.
  if (lostResultOf(op) === 'settled') return `${lost}: the next change of this world settles it first, all of it or none of it; ${CHECK}`;
  if (op === 'chmod-many') return `${lost}: some modes may be set and others not; check the files, or run it again (setting a mode twice changes nothing)`;
  return `${lost}: ${CHECK}`;
}

/** A change of more than one step lost without a result (→ 503 outcome_unknown, the op id in the envelope's `op`). */
export class OutcomeUnknownError extends DomainError<'outcome_unknown'> {
  constructor(op: Op, opId: string, cause: JobLostError) {
    super('outcome_unknown', 'unavailable', `fileedit: ${op} ${opId}: ${cause.message}`, { callerMessage: lostMessage(op, opId), details: { op: opId }, cause });
    this.name = 'OutcomeUnknownError';
  }
}

/** The error a lost change of `op` is answered with: the JobLostError itself for a one-step change, else OutcomeUnknownError. */
export function lostChange(op: Op, opId: string, err: JobLostError): Error {
  // Made in one atomic step: a lost result leaves the change made or not made, never half.
  return lostResultOf(op) === 'atomic' ? err : new OutcomeUnknownError(op, opId, err);
}
