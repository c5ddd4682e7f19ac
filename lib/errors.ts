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
  /** When a caller meets it. */
  meaning: string;
}

/**
 * Every envelope code, with its kinds and meaning. A code not listed here cannot be thrown (the
 * constructors take only these), so the generated table is complete.
 */
export const ERROR_CODES = {
  bad_request: {
    kinds: ['invalid'],
    meaning:
      'missing `?path=`, `?path=` not valid percent-encoded UTF-8, a malformed Host header or request line, missing/invalid body, unknown body field, bad `expect_sha256`, `create_only` with `expect_sha256`, empty `to`',
  },
  bad_name: {
    kinds: ['invalid'],
    meaning:
      "server name not `^[a-z0-9-]{3,32}$` without a leading/trailing `-`; a name field (zip, compress or pull `name`, or the name a pulled answer's Content-Disposition gives) that is not one new file name by the name rule (docs/routes.md, Names) or lacks its format's ending",
  },
  bad_path: {
    kinds: ['invalid'],
    meaning:
      'escapes the world (`..`, absolute, links leading out), a move or restore that would take a relative link further above the world root, a guarded file, a conditional write to the withheld file, a folder where a file is needed, a name over 255 bytes, a path over 4096 bytes, a NUL byte; a path the call creates with a control or bidirectional control character (docs/routes.md, Names); unzip of a path not ending in an archive ending',
  },
  digest_required: { kinds: ['invalid'], meaning: 'a write without `content_sha256`, or an upload without a `Content-Digest` sha-256 (checked before any Job)' },
  bad_digest: { kinds: ['invalid'], meaning: 'a malformed `content_sha256` or `Content-Digest` (checked before any Job)' },
  digest_mismatch: { kinds: ['invalid'], meaning: 'the content is not what its SHA-256 says; nothing was changed' },
  cancelled: { kinds: ['invalid'], meaning: 'the caller went away mid-request (logged at info; nobody reads it)' },
  unauthorized: { kinds: ['unauthorized'], meaning: 'no or wrong bearer token (kubernetes mode: a token the apiserver does not accept for the audience)' },
  forbidden: { kinds: ['forbidden'], meaning: "kubernetes mode: the caller lacks the route's permission; the message names it" },
  not_found: { kinds: ['not_found'], meaning: 'no such file or parent folder; unknown server; unknown route; a download URL that was not signed here or was changed' },
  trash_not_found: { kinds: ['not_found'], meaning: 'a restore or purge of an undo-trash record that does not exist (never was, already restored or purged, or expired)' },
  upload_not_found: { kinds: ['not_found'], meaning: 'no such upload session, or it has ended (committed, cancelled or expired)' },
  method_not_allowed: { kinds: ['not_allowed'], meaning: '`HEAD` on a download URL (it would start a Job)' },
  request_timeout: { kinds: ['stalled'], meaning: 'the request headers did not arrive in time (answered by the listener)' },
  upload_stalled: { kinds: ['stalled'], meaning: 'an upload body paused for longer than the idle limit; nothing was changed' },
  not_stopped: { kinds: ['conflict'], meaning: 'a change (or, with `FELIS_READ_WHILE_RUNNING=off`, any file call) while the server is running or starting' },
  volume_exclusive: {
    kinds: ['conflict'],
    meaning: "a read of a running server whose world claim is `ReadWriteOncePod`: only the game's Pod may mount it, so no Job can read beside it; stop the server first",
  },
  no_world_volume: { kinds: ['conflict'], meaning: 'the server has no world volume yet' },
  world_reclaiming: { kinds: ['conflict'], meaning: 'a start while the reaper is giving the world back' },
  maintenance_in_progress: {
    kinds: ['conflict'],
    meaning: 'something holds the world; the message names it, `Retry-After` says when to try again. A mutation sent with `Prefer: wait=<s>` waits for another file mutation instead',
  },
  lock_protected: { kinds: ['conflict'], meaning: 'a `migration@` lock: only Felis removes it' },
  lock_fresh: { kinds: ['conflict'], meaning: 'a lock taken less than 2 minutes ago; wait for it to lapse or retry with `?force=true`' },
  withheld_linked: { kinds: ['conflict'], meaning: 'a delete or replace of the withheld file (or a folder holding it) while other hard links to it exist: delete those first' },
  redacted_value_unknown: {
    kinds: ['conflict'],
    meaning:
      'new content for the root `server.properties` holds `<key>=<redacted by felis>` for a key the file on disk has no value for (or there is no file): the placeholder cannot be given its value, and nothing was written (docs/withheld-file.md)',
  },
  file_changed: { kinds: ['conflict'], meaning: '`expect_sha256` no longer matches' },
  file_exists: {
    kinds: ['conflict'],
    meaning: "`create_only`, mkdir or rename onto an existing name; a batch move onto an existing name; a trash restore onto a path that exists again (the error's `path` names it)",
  },
  mixed_folders: { kinds: ['invalid'], meaning: 'a compress whose paths are not all in one folder (the archive goes into that folder); the details name the first path that differs' },
  batch_conflict: {
    kinds: ['conflict'],
    meaning: 'two items of a batch (delete, move, chmod) clash: the same path twice, two moves onto one name, a move of or into a folder another item moves; nothing was changed',
  },
  event_conflict: { kinds: ['conflict'], meaning: "an event's source and id were already used for a different request; it was not run" },
  upload_paused: { kinds: ['conflict'], meaning: 'the upload session has no running receiver; its next part or commit resumes it' },
  upload_busy: { kinds: ['conflict'], meaning: 'another call to this upload session is in progress, or it was begun for another file' },
  upload_offset_mismatch: { kinds: ['conflict'], meaning: "a part's offset is not where the session's bytes end" },
  upload_incomplete: { kinds: ['invalid', 'conflict'], meaning: 'invalid: a body ended before its length; conflict: a commit of a session that does not hold all its bytes' },
  upload_staging_tampered: { kinds: ['conflict'], meaning: "something on the world volume replaced or linked a file of an upload session's staging folder; the session is dropped" },
  export_expired: { kinds: ['gone'], meaning: 'a download URL past its `expires_at`: sign a new one' },
  event_answer_gone: { kinds: ['gone'], meaning: "an event handled before whose Job's result is no longer available; it was not applied again" },
  length_required: { kinds: ['length_required'], meaning: 'an upload or a part without `Content-Length`' },
  range_not_satisfiable: {
    kinds: ['unsatisfiable'],
    meaning: 'a download `Range` that starts at or past the end of the file (or any range of an empty file); `Content-Range: bytes */<size>` says the size',
  },
  too_large: {
    kinds: ['too_large'],
    meaning:
      'read over 1 MiB, write over 256 KiB, body over 1 MiB, an event over its limit, an upload body longer than its length, a move or restore into a shallower folder of more than its links can be checked in (5 s, 512 folder levels)',
  },
  part_too_large: { kinds: ['too_large'], meaning: 'an upload part longer than it said' },
  export_busy: { kinds: ['busy'], meaning: 'already the most downloads of this server running; `Retry-After` says when to retry' },
  too_many_uploads: { kinds: ['busy'], meaning: 'the server already has an upload session; `Retry-After` says when to try again' },
  too_many_pulls: { kinds: ['busy'], meaning: 'the most pulls of this server are already downloading (they hold no world, so they run side by side, at most 4); `Retry-After` says when to try again' },
  headers_too_large: { kinds: ['headers_too_large'], meaning: "request headers over Node's limit (answered by the listener, in the envelope)" },
  internal: {
    kinds: ['internal'],
    meaning:
      'anything else; the detail is only in the server log. A change made in one step (write, mkdir, rename, a file copy, a trash purge) whose Job or edit session ended without a result says it was either not made or fully made',
  },
  read_damaged: { kinds: ['damaged'], meaning: "the read's bytes did not hash to what the Job sent" },
  files_unavailable: { kinds: ['unavailable'], meaning: 'no worker image configured' },
  export_unavailable: { kinds: ['unavailable'], meaning: 'downloads without a readable job key (`FELIS_JOB_KEY_FILE`), or one too short' },
  outcome_unknown: {
    kinds: ['unavailable'],
    meaning:
      "a change of more than one step (a delete, a many-file delete, move or chmod, a trash restore) whose Job or edit session ended without a result: it may be made, in part or in full. The error's `op` is its op id; a journaled one (a many-file delete or move, a restore) is finished or undone, all or nothing, by the next change of the world before anything else: check the files after it",
  },
  auth_unavailable: { kinds: ['unavailable'], meaning: 'kubernetes mode: the apiserver could not answer the TokenReview or SubjectAccessReview (never cached; retry)' },
  files_timeout: { kinds: ['timeout'], meaning: 'no result within 90 s (the Job is left to finish or hit its deadline)' },
  write_not_delivered: { kinds: ['timeout'], meaning: "with a job key: the write Job's Pod could not take the content in time; nothing was written, retry" },
  export_timeout: { kinds: ['timeout'], meaning: "the download's export Pod did not serve within `FELIS_DOWNLOAD_START_SECONDS`" },
  volume_full: { kinds: ['no_space'], meaning: 'the world volume is full; nothing was changed' },
  upload_staging_full: { kinds: ['no_space'], meaning: "an upload session's size does not fit the volume's free space" },
  event_malformed: { kinds: ['invalid'], meaning: 'a structured CloudEvent that is not a JSON object' },
  event_batch: { kinds: ['invalid'], meaning: 'a batch of CloudEvents; one event per delivery' },
  event_invalid: { kinds: ['invalid'], meaning: 'not a valid CloudEvent: attributes not valid, no id of its own, or a spec version other than 1.0' },
  event_missing: { kinds: ['invalid'], meaning: 'no CloudEvent in the request: neither `ce-*` headers (binary mode) nor `application/cloudevents+json`' },
  event_type_unknown: { kinds: ['invalid'], meaning: 'an event type this function does not accept; the message lists those it does' },
  event_data_type: { kinds: ['invalid'], meaning: 'event data that is not `application/json`' },
  pull_refused: {
    kinds: ['invalid'],
    meaning:
      "a pull's URL or an address its host resolves to is refused by the guard (scheme, credentials, port, a special-purpose or operator-denied address); the message says why; nothing was fetched",
  },
  pull_failed: { kinds: ['unavailable'], meaning: "a pull's upstream failed: no answer, an HTTP status that is not 2xx, too many redirects, a stalled or broken-off transfer; nothing was placed" },
  pull_cancelled: { kinds: ['conflict'], meaning: 'a pull ended by its cancel call; nothing was placed' },
  pull_not_running: { kinds: ['conflict'], meaning: 'a cancel of a pull that has already ended' },
  pull_cancel_unavailable: { kinds: ['unavailable'], meaning: 'a cancel without a job key (`FELIS_JOB_KEY_FILE`): the pull Job serves no cancel call' },
  event_data_invalid: { kinds: ['invalid'], meaning: 'event data that is not the request its type takes (no server, a field the type does not use, a body where none goes or none where one must)' },
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
