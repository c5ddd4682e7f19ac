/**
 * What the file editor needs of edit sessions (lib/browse/edit-sessions.ts, or a fake in tests):
 * one call that makes a small change through a session Pod, for a caller holding the world lock.
 * @module
 */
import type { Target } from '../job-spec/types.ts';
import type { EditCall } from '../protocol/edit-call.ts';
import { JobLostError } from '../runner/errors.ts';

export interface EditChannel {
  /**
   * The result line's payload from a session Pod; undefined when no session made the change (none
   * could be had within the start budget, or one refused the call before changing anything): the
   * caller then runs the one-shot Job, still under its lock. Throws JobLostError when the call
   * reached a Pod that ended without an answer (the change may or may not have been made, as
   * for a one-shot Job whose Pod is lost: EditLostError, which says whether the change may still
   * be under way; lib/files/lost-change.ts says what the caller is told), and the signal's reason
   * when it aborts.
   */
  run(t: Target, call: EditCall, signal: AbortSignal): Promise<string | undefined>;
  /**
   * The server is no longer stopped: the session this instance knows of is told to end (no API
   * request; best effort, a session also ends at its idle period). Optional for fakes.
   */
  end?(server: string): Promise<void>;
}

/** A change sent to a session Pod that gave no result; `inFlight`: it may still be under way there. */
export class EditLostError extends JobLostError {
  readonly inFlight: boolean;
  constructor(message: string, inFlight: boolean) {
    super(message, true);
    this.name = 'EditLostError';
    this.inFlight = inFlight;
  }
}
