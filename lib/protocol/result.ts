/**
 * The result and progress line protocol between the file Job's program and whoever reads its log.
 *
 * Both sides live here on purpose: the Job program writes with `formatResultLine` /
 * `formatProgressLine`, the runner and the ops lister read with `ResultLineScanner`,
 * `lastResultPayload` and `lastProgress`, and decode with `parseResultPayload` (result-parse.ts,
 * kept apart so the Job program's bundle carries no validation library). The wire format is Felis's, byte for byte, so the
 * original image and this one are interchangeable on either side.
 *
 * @module
 */

import { MAX_RECOVERED, parseRecoveredLine, type RecoveredOp } from './recovered.ts';

/** Marks the one line of compact JSON that carries an operation's outcome. */
export const RESULT_PREFIX = 'FELIS-FILES-RESULT: ';
/** Marks a progress line of a background op: `{"done":d,"total":n}`. */
export const PROGRESS_PREFIX = 'FELIS-FILES-PROGRESS: ';
/** The longest log line a reader accepts, and the most it reads of one log (seed `maxLogBytes`). */
export const MAX_LOG_BYTES = 4 << 20;

/** Caller-fault outcomes a Job reports with exit code 0: the op ran and refused, nothing broke. */
export const RESULT_CODES = [
  'bad_path',
  // A name field (zip, compress, pull) or a pulled answer's name that the name rule refuses (names.ts).
  'bad_name',
  'not_found',
  'too_large',
  'conflict',
  'no_space',
  'exists',
  'digest_mismatch',
  'archive_invalid',
  'archive_unsafe',
  'archive_symlink',
  'type_conflict',
  'withheld_linked',
  // New content for the root server.properties holds a redacted placeholder with no value on disk to keep.
  'redacted_value_unknown',
  // The many-file ops: two items of one batch touch the same path (functions/files-batch/job/batch-common.ts).
  'batch_conflict',
  // pull: the SSRF guard refused the URL or an address; the upstream failed; a cancel call ended it.
  'pull_refused',
  'pull_failed',
  'pull_cancelled',
  // trash-restore, trash-purge: no trash record has that id (job/trash/).
  'trash_not_found',
  // read with decompress: the file is not gzip data, or its gzip data is damaged.
  'gzip_invalid',
] as const;
export type ResultCode = (typeof RESULT_CODES)[number];

export interface Entry {
  name: string;
  size: number;
  is_dir: boolean;
  /** RFC 3339 with nanoseconds, as Go marshals a time.Time. */
  mod_time: string;
  /**
   * The permission bits as three octal digits (`"644"`), and whether the entry is a symbolic link
   * (listed as itself, never followed). This program always writes both; an original Felis Job's
   * listing has neither, so a reader takes them as optional.
   */
  mode?: string;
  is_symlink?: boolean;
}

/** search: one entry found, with its path from the world's root. */
export interface SearchMatch {
  path: string;
  name: string;
  size: number;
  is_dir: boolean;
  mod_time: string;
}

/**
 * The Result JSON. Every field is omitted when it holds its zero value, as Go's `omitempty` does,
 * so a reader must treat a missing field as zero (for example `avail` of a full volume).
 */
export interface Result {
  /** Kept as a string: a newer Job may report a code this reader does not know (never success). */
  code?: string;
  error?: string;
  entries?: Entry[];
  content?: string;
  truncated?: boolean;
  sha256?: string;
  content_sha256?: string;
  conflicts?: string[];
  conflict_count?: number;
  entry?: string;
  need?: number;
  avail?: number;
  files?: number;
  bytes?: number;
  /** search: the entries found, in byte order of path. */
  matches?: SearchMatch[];
  /** search: entries looked at. */
  scanned?: number;
  /** copy: the path the copy landed at; compress: the archive's path. */
  to?: string;
  /** copy: entries left out (links leading outside, special files, the withheld file); compress: links, special files and withheld files left out. */
  skipped?: number;
  /** delete-many, move-many, chmod-many: the items applied, by path, in the batch's order. */
  done?: string[];
  /** delete-many, move-many, chmod-many: the items the disk refused after every check passed. */
  failed?: BatchFailure[];
  /** trash-list: the page of records, newest first, and the id the next page starts after. */
  trash_items?: TrashItem[];
  trash_next?: string;
  /** Any op that put something in the trash: its record's id (so a caller can offer to undo it). */
  trash_id?: string;
  /** trash-restore: the paths put back, in the record's order. */
  restored?: string[];
  /** trash-purge: records removed for good (their bytes in `bytes`). */
  purged?: number;
  /** list, trash-list: bytes the trash holds, which a mutation can give back when it needs room. */
  trash_bytes?: number;
  /**
   * pull: the download is in its staging folder, waiting to be placed at `to` (`bytes` long) by a
   * `pull-place` op under the world's line (docs/pulls.md). Ours only.
   */
  staged?: boolean;
  /**
   * An op of ours that Felis does not have answers here, whole, in the shape its folder's
   * result.ts decodes (for example functions/files-usage/), instead of adding fields above.
   */
  report?: unknown;
}

/** trash-list: one record of the undo trash, as the Job reports it (job/trash/record.ts). */
export interface TrashItem {
  /** 16 lowercase hex digits: the record's time in ms (12) and 4 random ones, so ids sort by age. */
  id: string;
  /** The op that put it there (`delete`, `delete-many`, `write`, `upload`, `unzip`, ...). */
  op: string;
  /** The paths it removed or replaced, root-relative, in the op's order. */
  paths: string[];
  /** Bytes of regular files it holds, and entries (files, folders, links) in all. */
  bytes: number;
  entries: number;
  /** RFC 3339 (ms): when it was trashed, and when it goes for good. */
  at: string;
  expires_at: string;
  /** Who asked for the op (the function's actor name), or "" when the Job was not told. */
  actor: string;
}

/** One item of a batch that the disk refused once the whole batch had been checked (space, I/O). */
export interface BatchFailure {
  path: string;
  error: { code: string; message: string };
}

/** Field order of the Go struct, so our lines are byte-for-byte what the original prints. */
export const FIELD_ORDER: (keyof Result)[] = [
  'code',
  'error',
  'entries',
  'content',
  'truncated',
  'sha256',
  'content_sha256',
  'conflicts',
  'conflict_count',
  'entry',
  'need',
  'avail',
  'files',
  'bytes',
  // search
  'matches',
  'scanned',
  // copy
  'to',
  'skipped',
  // delete-many, move-many, chmod-many.
  'done',
  'failed',
  // the undo trash
  'trash_items',
  'trash_next',
  'trash_id',
  'restored',
  'purged',
  'trash_bytes',
  // pull
  'staged',
  'report',
];

function isZero(v: unknown): boolean {
  return v === undefined || v === null || v === '' || v === 0 || v === false || (Array.isArray(v) && v.length === 0);
}

/** Renders one result line, newline-terminated, zero-valued fields omitted. */
export function formatResultLine(r: Result): string {
  const out: Record<string, unknown> = {};
  for (const k of FIELD_ORDER) {
    if (!isZero(r[k])) out[k] = r[k];
  }
  return RESULT_PREFIX + JSON.stringify(out) + '\n';
}

/** The tail kept for "no result" diagnostics: last non-result line, trimmed, cut to 512 bytes. */
export function diagnosticTail(line: string): string {
  const t = line.trim();
  const buf = Buffer.from(t);
  if (buf.length <= 512) return t;
  return '...' + buf.subarray(buf.length - 512).toString();
}

/**
 * Incremental reader for a streamed log: feed it chunks as they arrive, and it reports the first
 * result line as soon as that line is complete. It never holds more than one line (bounded by
 * MAX_LOG_BYTES) and counts what it has read so a caller can stop at MAX_LOG_BYTES in total.
 */
export class ResultLineScanner {
  #partial = '';
  #bytes = 0;
  #lastOther = '';
  #payload: string | undefined;
  readonly #recovered: RecoveredOp[] = [];

  /** Bytes fed so far. */
  get bytesRead(): number {
    return this.#bytes;
  }
  /** The payload (text after the prefix) of the first result line, once seen. */
  get payload(): string | undefined {
    return this.#payload;
  }
  /** The recovery lines seen before the result (recovered.ts). */
  get recovered(): readonly RecoveredOp[] {
    return this.#recovered;
  }
  /** The last complete line that was not a result line: the diagnostic for "no result". */
  get lastOtherLine(): string {
    return this.#lastOther || this.#partial;
  }

  /** Feeds a chunk. Returns the payload once the first result line is complete. */
  push(chunk: string | Buffer): string | undefined {
    if (this.#payload !== undefined) return this.#payload;
    const text = typeof chunk === 'string' ? chunk : chunk.toString('utf8');
    this.#bytes += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
    let buf = this.#partial + text;
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl).replace(/\r$/, '');
      buf = buf.slice(nl + 1);
      if (this.#take(line)) return this.#payload;
    }
    // A line longer than the bound is noise we will never parse: keep only its tail for diagnostics.
    this.#partial = buf.length > MAX_LOG_BYTES ? buf.slice(-1024) : buf;
    return undefined;
  }

  /** Call at end of stream: a last line without a newline still counts. */
  end(): string | undefined {
    if (this.#payload === undefined && this.#partial !== '') {
      const line = this.#partial;
      this.#partial = '';
      this.#take(line);
    }
    return this.#payload;
  }

  #take(line: string): boolean {
    if (line.startsWith(RESULT_PREFIX)) {
      this.#payload = line.slice(RESULT_PREFIX.length);
      return true;
    }
    const r = parseRecoveredLine(line);
    if (r) {
      if (this.#recovered.length < MAX_RECOVERED) this.#recovered.push(r);
      return false;
    }
    if (line.trim() !== '') this.#lastOther = line;
    return false;
  }
}

/** The payload of the last result line in a whole log (the ops lister's rule), if any. */
export function lastResultPayload(log: string): string | undefined {
  let found: string | undefined;
  for (const line of log.split('\n')) {
    const l = line.replace(/\r$/, '');
    if (l.startsWith(RESULT_PREFIX)) found = l.slice(RESULT_PREFIX.length);
  }
  return found;
}

export interface Progress {
  done: number;
  total: number;
}

/** Renders one progress line, newline-terminated. */
export function formatProgressLine(p: Progress): string {
  return PROGRESS_PREFIX + JSON.stringify({ done: p.done, total: p.total }) + '\n';
}

/** The last well-formed progress line in a log; malformed or truncated lines are skipped. */
export function lastProgress(log: string): Progress | undefined {
  let found: Progress | undefined;
  for (const line of log.split('\n')) {
    const l = line.replace(/\r$/, '');
    if (!l.startsWith(PROGRESS_PREFIX)) continue;
    try {
      const v = JSON.parse(l.slice(PROGRESS_PREFIX.length)) as unknown;
      if (typeof v === 'object' && v !== null && Number.isInteger((v as Progress).done) && Number.isInteger((v as Progress).total)) {
        found = { done: (v as Progress).done, total: (v as Progress).total };
      }
    } catch {
      // A truncated line: skip it, an earlier one still stands.
    }
  }
  return found;
}

/** The timer a throttle waits with (tests pass a fake one with their fake clock). */
export interface ProgressTimer {
  set(fn: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

const realTimer: ProgressTimer = {
  set: (fn, ms) => setTimeout(fn, ms).unref(),
  clear: (h) => clearTimeout(h as NodeJS.Timeout),
};

/**
 * Throttles progress lines, so a big op cannot flood the log, without losing the last value: the
 * first always prints; then a value prints at once when done >= total or at least `intervalMs` has
 * passed since the last printed line; otherwise it waits, and the latest waiting value prints as
 * soon as the interval allows (trailing edge), never dropped. `flush` prints a waiting value now:
 * call it before the result line, so the last progress always comes before the result. A waiting
 * timer does not keep the process alive. `done` is never printed above `total`, and a value just
 * printed is not printed again.
 */
export class ProgressThrottle {
  #last: number | undefined;
  #printed: Progress | undefined;
  #pending: Progress | undefined;
  #timer: unknown;
  readonly #write: (line: string) => void;
  readonly #intervalMs: number;
  readonly #now: () => number;
  readonly #timers: ProgressTimer;

  constructor(write: (line: string) => void, intervalMs = 1000, now: () => number = () => performance.now(), timers: ProgressTimer = realTimer) {
    this.#write = write;
    this.#intervalMs = intervalMs;
    this.#now = now;
    this.#timers = timers;
  }

  report(done: number, total: number): void {
    // A total is planned before the work (a walk of the files, an archive's declared sizes): a file
    // that grows or appears between the plan and the work would count past it, and a line past
    // its total would read as more than all of the work.
    done = Math.min(done, total);
    // Nothing new (a clamped count, files of no size at the total): no line, so they cannot flood the log.
    if (this.#pending === undefined && this.#printed?.done === done && this.#printed.total === total) return;
    const t = this.#now();
    if (this.#last !== undefined && done < total && t - this.#last < this.#intervalMs) {
      this.#pending = { done, total };
      this.#timer ??= this.#timers.set(
        () => {
          this.#timer = undefined;
          this.flush();
        },
        Math.max(0, this.#intervalMs - (t - this.#last)),
      );
      return;
    }
    this.#print({ done, total }, t);
  }

  /** Prints the value still waiting, if any. */
  flush(): void {
    if (this.#pending) this.#print(this.#pending, this.#now());
  }

  #print(p: Progress, t: number): void {
    this.#pending = undefined;
    if (this.#timer !== undefined) {
      this.#timers.clear(this.#timer);
      this.#timer = undefined;
    }
    this.#last = t;
    this.#printed = p;
    try {
      this.#write(formatProgressLine(p));
    } catch {
      // Progress is advisory; a failed write must not fail the operation.
    }
  }
}
