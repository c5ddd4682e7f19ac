/**
 * The one shape of an error meant for the caller, and the catalogue of every code a caller can be
 * answered with. Domain modules throw a `DomainError` (a stable `code`, an `errorKind` that says
 * what sort of refusal it is, a message the caller reads, optional details); only lib/http turns a
 * kind into an HTTP status (lib/http/error-map.ts), so nothing below the HTTP edge speaks HTTP.
 * docs/errors.md is generated from this catalogue and that map (`npm run errors-doc`).
 * @module
 */

/** What sort of refusal an error is; lib/http/error-map.ts gives each one HTTP status. */
export const ERROR_KINDS = [
  'invalid',
  'unauthorized',
  'forbidden',
  'not_found',
  'not_allowed',
  'stalled',
  'conflict',
  'gone',
  'length_required',
  'too_large',
  'unsatisfiable',
  'busy',
  'headers_too_large',
  'internal',
  'damaged',
  'unavailable',
  'timeout',
  'no_space',
] as const;

export type ErrorKind = (typeof ERROR_KINDS)[number];

interface CodeEntry {
  /** The kinds this code is answered with (most codes have one; a few mean one thing in two settings). */
  kinds: readonly ErrorKind[];
}

/**
 * Every envelope code, with its kinds (what each means to a caller: ./error-meanings.ts). A code not listed here cannot be thrown (the
 * constructors take only these), so the generated table is complete.
 */
export const ERROR_CODES = {
  bad_request: { kinds: ['invalid'] },
  bad_name: { kinds: ['invalid'] },
  bad_path: { kinds: ['invalid'] },
  digest_required: { kinds: ['invalid'] },
  bad_digest: { kinds: ['invalid'] },
  digest_mismatch: { kinds: ['invalid'] },
  cancelled: { kinds: ['invalid'] },
  unauthorized: { kinds: ['unauthorized'] },
  forbidden: { kinds: ['forbidden'] },
  not_found: { kinds: ['not_found'] },
  trash_not_found: { kinds: ['not_found'] },
  upload_not_found: { kinds: ['not_found'] },
  op_not_found: { kinds: ['not_found'] },
  method_not_allowed: { kinds: ['not_allowed'] },
  request_timeout: { kinds: ['stalled'] },
  upload_stalled: { kinds: ['stalled'] },
  not_stopped: { kinds: ['conflict'] },
  volume_exclusive: { kinds: ['conflict'] },
  no_world_volume: { kinds: ['conflict'] },
  world_reclaiming: { kinds: ['conflict'] },
  maintenance_in_progress: { kinds: ['conflict'] },
  lock_protected: { kinds: ['conflict'] },
  lock_fresh: { kinds: ['conflict'] },
  withheld_linked: { kinds: ['conflict'] },
  redacted_value_unknown: { kinds: ['conflict'] },
  file_changed: { kinds: ['conflict'] },
  file_exists: { kinds: ['conflict'] },
  mixed_folders: { kinds: ['invalid'] },
  nbt_invalid: { kinds: ['invalid'] },
  region_invalid: { kinds: ['invalid'] },
  gzip_invalid: { kinds: ['invalid'] },
  batch_conflict: { kinds: ['conflict'] },
  event_conflict: { kinds: ['conflict'] },
  upload_paused: { kinds: ['conflict'] },
  upload_busy: { kinds: ['conflict'] },
  upload_offset_mismatch: { kinds: ['conflict'] },
  upload_incomplete: { kinds: ['invalid', 'conflict'] },
  upload_staging_tampered: { kinds: ['conflict'] },
  export_expired: { kinds: ['gone'] },
  upload_url_expired: { kinds: ['gone'] },
  upload_url_used: { kinds: ['gone'] },
  event_answer_gone: { kinds: ['gone'] },
  length_required: { kinds: ['length_required'] },
  range_not_satisfiable: { kinds: ['unsatisfiable'] },
  too_large: { kinds: ['too_large'] },
  part_too_large: { kinds: ['too_large'] },
  export_busy: { kinds: ['busy'] },
  too_many_uploads: { kinds: ['busy'] },
  too_many_pulls: { kinds: ['busy'] },
  follow_limit: { kinds: ['busy'] },
  headers_too_large: { kinds: ['headers_too_large'] },
  internal: { kinds: ['internal'] },
  read_damaged: { kinds: ['damaged'] },
  files_unavailable: { kinds: ['unavailable'] },
  export_unavailable: { kinds: ['unavailable'] },
  follow_unavailable: { kinds: ['unavailable'] },
  outcome_unknown: { kinds: ['unavailable'] },
  auth_unavailable: { kinds: ['unavailable'] },
  files_timeout: { kinds: ['timeout'] },
  write_not_delivered: { kinds: ['timeout'] },
  export_timeout: { kinds: ['timeout'] },
  volume_full: { kinds: ['no_space'] },
  upload_staging_full: { kinds: ['no_space'] },
  event_malformed: { kinds: ['invalid'] },
  event_batch: { kinds: ['invalid'] },
  event_invalid: { kinds: ['invalid'] },
  event_missing: { kinds: ['invalid'] },
  event_type_unknown: { kinds: ['invalid'] },
  event_data_type: { kinds: ['invalid'] },
  pull_refused: { kinds: ['invalid'] },
  pull_failed: { kinds: ['unavailable'] },
  pull_cancelled: { kinds: ['conflict'] },
  pull_not_running: { kinds: ['conflict'] },
  pull_cancel_unavailable: { kinds: ['unavailable'] },
  event_data_invalid: { kinds: ['invalid'] },
} as const satisfies Record<string, CodeEntry>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** A code and the kinds it may be thrown with. */
type KindOf<C extends ErrorCode> = (typeof ERROR_CODES)[C]['kinds'][number];

export function isErrorCode(code: string): code is ErrorCode {
  return Object.hasOwn(ERROR_CODES, code);
}

export interface DomainErrorOptions {
  /** What the caller reads when it differs from the message (which then stays for the server log). */
  callerMessage?: string;
  details?: Record<string, unknown>;
  cause?: unknown;
  /** When the caller may try again, in whole seconds (the HTTP edge sends it as `Retry-After`). */
  retryAfterSeconds?: number;
}

/** An error meant for the caller: its code and caller message are shown as they are. */
export class DomainError<C extends ErrorCode = ErrorCode> extends Error {
  readonly code: C;
  /** What sort of refusal (named so, not `kind`, because some errors carry a `kind` of their own). */
  readonly errorKind: ErrorKind;
  readonly details: Readonly<Record<string, unknown>> | undefined;
  /** When the caller may try again, when the refusal can tell (lib/http/error-map.ts gives the rest a default). */
  readonly retryAfterSeconds: number | undefined;
  readonly #callerMessage: string | undefined;
  constructor(code: C, kind: KindOf<C>, message: string, opts: DomainErrorOptions = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'DomainError';
    this.code = code;
    this.errorKind = kind;
    this.#callerMessage = opts.callerMessage;
    this.details = opts.details;
    this.retryAfterSeconds = opts.retryAfterSeconds;
  }

  /** What the caller reads: the message, unless the error was given one of its own for the caller. */
  get callerMessage(): string {
    return this.#callerMessage ?? this.message;
  }
}

/** A code with one kind. */
export type SingleKindCode = { [C in ErrorCode]: (typeof ERROR_CODES)[C]['kinds'] extends readonly [ErrorKind] ? C : never }[ErrorCode];

/** The DomainError of a code that has one kind: its kind from the catalogue. */
export function domainError(code: SingleKindCode, message: string, opts?: DomainErrorOptions): DomainError {
  return new DomainError(code, ERROR_CODES[code].kinds[0] as never, message, opts);
}
