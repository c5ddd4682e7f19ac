/**
 * What each envelope code means to a caller: the prose of docs/errors.md (npm run errors-doc).
 * Apart from lib/errors.ts so that no bundle carries it: the functions and the Job program need a
 * code's kinds, only the generated page needs its meaning. Every code has one (the type says so).
 * @module
 */
import type { ErrorCode } from './errors.ts';

export const ERROR_MEANINGS = {
  bad_request:
    'missing `?path=`, `?path=` not valid percent-encoded UTF-8, a malformed Host header or request line, a missing body where a field is required (a body whose fields are all optional may be left out), an invalid body, unknown body field, bad `expect_sha256`, `create_only` with `expect_sha256`, empty `to`',
  bad_name:
    "server name not `^[a-z0-9-]{3,32}$` without a leading/trailing `-`; a name field (zip, compress or pull `name`, or the name a pulled answer's Content-Disposition gives) that is not one new file name by the name rule (docs/routes.md, Names) or lacks its format's ending",
  bad_path:
    'escapes the world (a `..` above the root, links leading out; a leading `/` is the world folder, docs/routes.md, Paths), the root where an op needs a path inside it, a move or restore that would take a relative link further above the world root, a guarded file, a conditional write to the withheld file, a folder where a file is needed, a name over 255 bytes, a path over 4096 bytes, a NUL byte; a path the call creates with a control or bidirectional control character (docs/routes.md, Names); unzip of a path not ending in an archive ending',
  digest_required: 'a write without `content_sha256`, or an upload without a `Content-Digest` sha-256 (checked before any Job)',
  bad_digest: 'a malformed `content_sha256` or `Content-Digest` (checked before any Job)',
  digest_mismatch: 'the content is not what its SHA-256 says; nothing was changed',
  cancelled: 'the caller went away mid-request (logged at info; nobody reads it)',
  unauthorized: 'no or wrong bearer token (kubernetes mode: a token the apiserver does not accept for the audience)',
  forbidden: "kubernetes mode: the caller lacks the route's permission; the message names it",
  not_found: 'no such file or parent folder; unknown server; unknown route; a download URL that was not signed here or was changed',
  trash_not_found: 'a restore or purge of an undo-trash record that does not exist (never was, already restored or purged, or expired)',
  upload_not_found: 'no such upload session, or it has ended (committed, cancelled or expired)',
  op_not_found: "no background op of this server has that id (never had, another server's, or ended more than 30 minutes ago and gone with its Job)",
  method_not_allowed: 'a method the path does not take (the `Allow` header lists those it does); `HEAD` on a download URL (it would start a Job)',
  request_timeout: 'the request headers did not arrive in time (answered by the listener)',
  upload_stalled: 'an upload body paused for longer than the idle limit; nothing was changed',
  not_stopped: 'a change (or, with `FELIS_READ_WHILE_RUNNING=off`, any file call) while the server is running or starting',
  volume_exclusive: "a read of a running server whose world claim is `ReadWriteOncePod`: only the game's Pod may mount it, so no Job can read beside it; stop the server first",
  no_world_volume: 'the server has no world volume yet',
  world_reclaiming: 'a start while the reaper is giving the world back',
  maintenance_in_progress: 'something holds the world; the message names it, `Retry-After` says when to try again. A mutation sent with `Prefer: wait=<s>` waits for another file mutation instead',
  lock_protected: 'a `migration@` lock: only Felis removes it',
  lock_fresh: 'a lock taken less than 2 minutes ago; wait for it to lapse or retry with `?force=true`',
  withheld_linked: 'a delete or replace of the withheld file (or a folder holding it) while other hard links to it exist: delete those first',
  redacted_value_unknown:
    'new content for the root `server.properties` holds `<key>=<redacted by felis>` for a key the file on disk has no value for (or there is no file): the placeholder cannot be given its value, and nothing was written (docs/withheld-file.md)',
  file_changed: '`expect_sha256` no longer matches',
  file_exists: "`create_only`, mkdir or rename onto an existing name; a batch move onto an existing name; a trash restore onto a path that exists again (the error's `path` names it)",
  mixed_folders: 'a compress whose paths are not all in one folder (the archive goes into that folder); the details name the first path that differs',
  nbt_invalid:
    "files/nbt of a file that is no NBT this reads (damaged, hostile: deeper than 512, declared lengths past its end, decompressing past 32 MiB, strings not Java's modified UTF-8), or a PUT whose `root` is no typed NBT (the message names the bad tag's JSON path)",
  region_invalid:
    'files/region of a file that is not a region file: its name is not `r.<x>.<z>.mca`, or it is shorter than a region header (8 KiB) and not empty; a corrupt chunk or slot is reported on the chunk instead',
  gzip_invalid: 'a read with `decompress=true` of a file that is not gzip data (its first bytes decide, not its name), or whose gzip data is damaged or cut short',
  batch_conflict: 'two items of a batch (delete, move, chmod) clash: the same path twice, two moves onto one name, a move of or into a folder another item moves; nothing was changed',
  event_conflict: "an event's source and id were already used for a different request; it was not run",
  upload_paused: 'the upload session has no running receiver; its next part or commit resumes it',
  upload_busy: 'another call to this upload session is in progress, or it was begun for another file',
  upload_offset_mismatch: "a part's offset is not where the session's bytes end",
  upload_incomplete: 'invalid: a body ended before its length; conflict: a commit of a session that does not hold all its bytes',
  upload_staging_tampered: "something on the world volume replaced or linked a file of an upload session's staging folder; the session is dropped",
  export_expired: 'a download URL past its `expires_at`: sign a new one',
  upload_url_expired: 'an upload URL past its `expires_at`: sign a new one',
  upload_url_used: 'an upload URL already used (each is good for one upload, whatever its outcome once its receiver started): sign a new one',
  event_answer_gone: "an event handled before whose Job's result is no longer available; it was not applied again",
  length_required: 'an upload or a part without `Content-Length`',
  range_not_satisfiable: 'a download `Range` that starts at or past the end of the file (or any range of an empty file); `Content-Range: bytes */<size>` says the size',
  too_large:
    "read over 1 MiB, write over 1 MiB (256 KiB without a job key: the content then rides in the Job's env), body over 1 MiB (a write's: 2 MiB), an event over its limit, an upload body longer than its length, a move or restore into a shallower folder of more than its links can be checked in (5 s, 512 folder levels)",
  part_too_large: 'an upload part longer than it said',
  export_busy: 'already the most downloads of this server running; `Retry-After` says when to retry',
  too_many_uploads: 'the server already has an upload session; `Retry-After` says when to try again',
  too_many_pulls: 'the most pulls of this server are already downloading (they hold no world, so they run side by side, at most 4); `Retry-After` says when to try again',
  follow_limit: 'already the most log follows of this server running (2; their unfinished Jobs are counted); `Retry-After` says when to try again',
  headers_too_large: "request headers over Node's limit (answered by the listener, in the envelope)",
  internal:
    'anything else; the detail is only in the server log. A change made in one step (write, mkdir, rename, a file copy, a trash purge) whose Job or edit session ended without a result says it was either not made or fully made',
  read_damaged: "the read's bytes did not hash to what the Job sent",
  files_unavailable: 'no worker image configured',
  export_unavailable: 'downloads without a readable job key (`FELIS_JOB_KEY_FILE`), or one too short',
  follow_unavailable: 'a log follow (`files/tail?follow=true`) without a readable job key (`FELIS_JOB_KEY_FILE`): the follow Job serves its lines to the bearer of a token derived from it',
  outcome_unknown:
    "a change of more than one step (a delete, a many-file delete, move or chmod, a trash restore) whose Job or edit session ended without a result: it may be made, in part or in full. The error's `op` is its op id; a journaled one (a many-file delete or move, a restore) is finished or undone, all or nothing, by the next change of the world before anything else: check the files after it",
  auth_unavailable: 'kubernetes mode: the apiserver could not answer the TokenReview or SubjectAccessReview (never cached; retry)',
  files_timeout: 'no result within 90 s (the Job is left to finish or hit its deadline)',
  write_not_delivered: "with a job key: the write Job's Pod could not take the content in time; nothing was written, retry",
  export_timeout: "the download's export Pod did not serve within `FELIS_DOWNLOAD_START_SECONDS`",
  volume_full: 'the world volume is full; nothing was changed',
  upload_staging_full: "an upload session's size does not fit the volume's free space",
  event_malformed: 'a structured CloudEvent that is not a JSON object',
  event_batch: 'a batch of CloudEvents; one event per delivery',
  event_invalid: 'not a valid CloudEvent: attributes not valid, no id of its own, or a spec version other than 1.0',
  event_missing: 'no CloudEvent in the request: neither `ce-*` headers (binary mode) nor `application/cloudevents+json`',
  event_type_unknown: 'an event type this function does not accept; the message lists those it does',
  event_data_type: 'event data that is not `application/json`',
  pull_refused:
    "a pull's URL or an address its host resolves to is refused by the guard (scheme, credentials, port, a special-purpose or operator-denied address); the message says why; nothing was fetched",
  pull_failed: "a pull's upstream failed: no answer, an HTTP status that is not 2xx, too many redirects, a stalled or broken-off transfer; nothing was placed",
  pull_cancelled: 'a pull ended by its cancel call; nothing was placed',
  pull_not_running: 'a cancel of a pull that has already ended',
  pull_cancel_unavailable: 'a cancel without a job key (`FELIS_JOB_KEY_FILE`): the pull Job serves no cancel call',
  event_data_invalid: 'event data that is not the request its type takes (no server, a field the type does not use, a body where none goes or none where one must)',
} as const satisfies Record<ErrorCode, string>;
