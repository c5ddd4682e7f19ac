/** The refusals only a redelivered event can meet. @module */
import { DomainError } from '../errors.ts';

/**
 * The same source and id came with a different request (another server, op, path or body): the
 * first request's Job answers for that id, so this one is not run. 409: a retry runs it once the
 * first Job's record is gone, as a new event.
 */
export class EventConflictError extends DomainError {
  constructor(job: string) {
    super('event_conflict', 'conflict', `this event's source and id were already used for a different request (file job ${job}); it was not run`);
    this.name = 'EventConflictError';
  }
}

/**
 * The event was handled before, but its Job's answer can no longer be read (its Pod is gone).
 * The effect must not be repeated, and a retry cannot bring the answer back: 410, never retried.
 */
export class EventAnswerGoneError extends DomainError {
  constructor(job: string) {
    super('event_answer_gone', 'gone', `this event was already handled by file job ${job}, whose result is no longer available; it was not applied again`);
    this.name = 'EventAnswerGoneError';
  }
}
