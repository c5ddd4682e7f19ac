/**
 * What a file operation's outcome means to a caller: the Job's result codes become typed errors,
 * and each has one HTTP status and envelope code.
 * @module
 */

export const EDIT_ERRORS = {
  not_found: { status: 404, code: 'not_found', text: 'no such file or directory' },
  bad_path: { status: 400, code: 'bad_path', text: 'path is not accessible' },
  too_large: { status: 413, code: 'too_large', text: 'file is too large' },
  conflict: { status: 409, code: 'file_changed', text: 'file changed since it was opened' },
  no_space: { status: 507, code: 'volume_full', text: 'the server volume is full' },
  exists: { status: 409, code: 'file_exists', text: 'file already exists' },
  digest_mismatch: { status: 400, code: 'digest_mismatch', text: 'content does not match its sha256' },
  withheld_linked: { status: 409, code: 'withheld_linked', text: 'the proxy forwarding secret has other hard links; delete them first' },
} as const;

export type EditErrorKind = keyof typeof EDIT_ERRORS;

/** A caller-fault outcome. Its message (the sentinel text, then the Job's own) reaches the caller. */
export class FileEditError extends Error {
  readonly kind: EditErrorKind;
  constructor(kind: EditErrorKind, detail?: string) {
    super(`fileedit: ${EDIT_ERRORS[kind].text}${detail ? ': ' + detail : ''}`);
    this.name = 'FileEditError';
    this.kind = kind;
  }
}

/** The read's bytes do not hash to what the Job said it sent (→ 502 read_damaged). */
export class ReadDamagedError extends Error {
  constructor() {
    super("the file's bytes changed on their way from the file Job; read it again");
    this.name = 'ReadDamagedError';
  }
}

/**
 * A streamed write's content never reached its Job before the caller's deadline (its Pod did not
 * become reachable in time): nothing was written, and the Job ends on its own without writing
 * (→ 504 write_not_delivered).
 */
export class WriteNotDeliveredError extends Error {
  constructor(job: string) {
    super(`fileedit: the content of write job ${job} could not be delivered in time`);
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

export function isEditErrorKind(code: string): code is EditErrorKind {
  return Object.hasOwn(EDIT_ERRORS, code);
}
