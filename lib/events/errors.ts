/** The refusals only a redelivered event can meet. @module */
import { ApiError } from '../http/envelope.ts';

/** The same source and id came with a different request: a sender bug that no retry fixes. */
export class EventReusedError extends ApiError {
  constructor(job: string) {
    super(400, 'event_id_reused', `this event's source and id were already used for a different request (file job ${job})`);
    this.name = 'EventReusedError';
  }
}

/**
 * The event was handled before, but its Job's answer can no longer be read (its Pod is gone).
 * The effect must not be repeated, and a retry cannot bring the answer back: 410, never retried.
 */
export class EventAnswerGoneError extends ApiError {
  constructor(job: string) {
    super(410, 'event_answer_gone', `this event was already handled by file job ${job}, whose result is no longer available; it was not applied again`);
    this.name = 'EventAnswerGoneError';
  }
}
