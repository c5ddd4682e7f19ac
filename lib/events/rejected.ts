/**
 * The refusal of an event, apart from the reader (parse.ts) so the CloudEvents entry can name it
 * without loading the reader and the cloudevents SDK under it before an event arrives.
 * @module
 */

/** An event that can never be handled, whatever is retried: the delivery answers 400. */
export class EventRejected extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.name = 'EventRejected';
    this.code = code;
  }
}
