/**
 * What a file operation's outcome means to a caller: the Job's result codes become typed domain
 * errors (lib/http/error-map.ts gives each its HTTP status).
 * @module
 */
import { DomainError } from '../errors.ts';
import { EDIT_ERRORS, type EditErrorKind, isEditErrorKind } from '../protocol/edit-codes.ts';

export { EDIT_ERRORS, type EditErrorKind, isEditErrorKind };

/**
 * A caller-fault outcome. Its message reaches the caller: the Job's own, which names the path in
 * plain words, else the code's sentinel text (never both: the Job's says it better, and the
 * two together read twice, "file already exists: x already exists").
 */
export class FileEditError extends DomainError {
  /** The Job's result code (the envelope code is EDIT_ERRORS[kind].code). */
  readonly kind: EditErrorKind;
  /** `path`: the item of a batch it refuses (the envelope's `path`). */
  constructor(kind: EditErrorKind, detail?: string, path?: string) {
    const e = EDIT_ERRORS[kind];
    super(e.code, e.kind, detail || e.text, path === undefined ? {} : { details: { path } });
    this.name = 'FileEditError';
    this.kind = kind;
  }
}

/** The read's bytes do not hash to what the Job said it sent (→ 502 read_damaged). */
export class ReadDamagedError extends DomainError {
  constructor() {
    super('read_damaged', 'damaged', "the file's bytes changed on their way from the file Job; read it again");
    this.name = 'ReadDamagedError';
  }
}

/**
 * A streamed write's content never reached its Job before the caller's deadline (its Pod did not
 * become reachable in time): nothing was written, and the Job ends on its own without writing
 * (→ 504 write_not_delivered).
 */
export class WriteNotDeliveredError extends DomainError {
  constructor(job: string) {
    super('write_not_delivered', 'timeout', `fileedit: the content of write job ${job} could not be delivered in time`, {
      callerMessage: "the write's file Job could not take its content in time; nothing was written, retry shortly",
    });
    this.name = 'WriteNotDeliveredError';
  }
}

/** A result code this version does not know: an error, never a success (→ 500). */
export class UnknownResultCodeError extends Error {
  constructor(code: string, detail?: string) {
    super(`fileedit: file job reported unknown code ${JSON.stringify(code)}${detail ? ': ' + detail : ''}`);
    this.name = 'UnknownResultCodeError';
  }
}
