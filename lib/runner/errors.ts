/**
 * The runner's failures, apart from the runner so that the HTTP error handler can recognise them
 * without loading the Kubernetes client into every function.
 * @module
 */
import { DomainError } from '../errors.ts';

/** The caller's deadline passed before a result (→ 504 files_timeout). The Job is left to run. */
export class FilesTimeoutError extends DomainError {
  constructor(job: string) {
    super('files_timeout', 'timeout', `fileedit: timed out waiting for file job ${job} to finish`, {
      callerMessage: 'the file operation did not finish in time; retry shortly',
    });
    this.name = 'FilesTimeoutError';
  }
}

/** Any other failure to get a result. Its message is for the server log, never for the caller. */
export class RunnerError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(`fileedit: ${message}`, options);
    this.name = 'RunnerError';
  }
}

/**
 * The Job's container ended without a result line (killed, evicted, crashed). For a mutation made
 * in one step the caller is told what can be known: writes land by an atomic rename, so the file
 * is either as it was or fully written, and a read shows which. A change of more steps is answered
 * otherwise (lib/files/lost-change.ts: 503 outcome_unknown).
 */
export class JobLostError extends RunnerError {
  readonly callerMessage: string;
  constructor(message: string, mutating: boolean) {
    super(message);
    this.name = 'JobLostError';
    this.callerMessage = mutating
      ? 'the file operation ended without a result; the change was either not made or fully made (writes are atomic), so read the file to check'
      : 'the file operation ended without a result; retry it';
  }
}
