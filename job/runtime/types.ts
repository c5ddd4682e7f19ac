/**
 * What an op receives: the request (from flags and env) and the context (the open root and the few
 * system calls a test may replace).
 *
 * @module
 */
import type { WorldRoot } from '../volume/root.ts';
import type { StopGate } from '../journal/stop.ts';
import type { Batch } from '../../lib/protocol/batch-env.ts';
import type { ListIndexes } from '../listing/list-index.ts';
import type { PullSettings } from '../pull/settings.ts';
import type { TrashSettings } from '../../lib/protocol/trash-env.ts';

/** One `felis files` invocation, as `execute` takes it. */
export interface OpRequest {
  /** `list`, `read`, `write`, `mkdir`, `delete` or `rename`. */
  op: string;
  /** Relative to the root; "" means the root. */
  path: string;
  /** Mount path of the world PVC (`--worlds-root`). */
  worldsRoot: string;
  /** write: the bytes to land (from FELIS_FILE_CONTENT_*); absent means empty. */
  content?: Buffer;
  /** write: hex SHA-256 the content must hash to (`--sha256`); checked when non-empty. */
  sha256?: string;
  /** write: hex SHA-256 the current file must have (`--expect-sha256`); checked when non-empty. */
  expectSha256?: string;
  /** write: refuse any existing entry at the path (`--create-only`). */
  createOnly?: boolean;
  /**
   * rename: the destination. unzip: the folder to extract into (default: the archive's own).
   * zip: the archive's name in the source's folder (default: a free `<name>.zip`).
   * copy: the new path (default: a free `<name> copy<.ext>` beside the original).
   */
  to?: string;
  /** unzip: existing files may be replaced. */
  overwrite?: boolean;
  /** list: the page size (`--limit`); with `after` or `q`, any of them makes a paged listing. */
  limit?: number;
  /** list: the page starts strictly after this name (`--after`). */
  after?: string;
  /** list: case-insensitive substring of the names listed (`--q`). */
  q?: string;
  /**
   * copy (`--max-size`): a synchronous copy, refused with too_large unless the source is a regular
   * file of at most this many bytes. Absent or negative: any source.
   */
  maxSize?: number;
  /** delete-many, move-many, chmod-many, compress: the items (from FELIS_BATCH_*). */
  batch?: Batch;
  /** pull: the URL (`--url`) and the operator's rules from the env; `to` is the file's name. */
  pull?: PullSettings;
  /** compress: the archive's format (`--format`: zip, tar.gz, tar.xz or tar.zst). */
  format?: string;
  /** trash-restore, trash-purge: the record (`--trash-id`); trash-purge `--all`: every record. */
  trashId?: string;
  all?: boolean;
  /** pull-place: the op id of the pull whose staged download lands in `path` as `to` (`--pull-op`). */
  pullOp?: string;
}

/** Free-space figures as statfs reports them; free bytes = bavail × bsize. */
export interface StatfsLike {
  bavail: bigint | number;
  bsize: bigint | number;
}

/** Injection points for tests. Production uses the defaults. */
export interface ExecuteOptions {
  /** Default `fs.statfsSync(path, {bigint: true})`; called with the root path. */
  statfs?: (path: string) => StatfsLike;
  /** Default `fs.lchownSync` (never follows a final link). Failures are ignored. */
  chown?: (path: string, uid: number, gid: number) => void;
  /** Default `fs.fsyncSync`: files (errors matter) and directories (best effort). */
  fsync?: (fd: number) => void;
  /** Default `crypto.randomBytes`: the temp-file name. */
  randomBytes?: (n: number) => Buffer;
  /** Test-only: see `WorldRootOptions.beforeStep`. */
  beforeStep?: (componentPath: string) => void;
  /** Default `fs.renameSync`: the moves of an extraction's placement (tests inject failures). */
  rename?: (from: string, to: string) => void;
  /**
   * Default: `sync -f <path>` (one syncfs of the volume). Throwing makes the caller fall back to an
   * fsync of every file it wrote.
   */
  syncfs?: (path: string) => void;
  /** Where progress lines go. Default: nowhere (the CLI passes stdout). */
  progress?: (line: string) => void;
  /** Registers what a stop signal (SIGTERM) does; the Job program's main passes it. Default: none. */
  onSignal?: (stop: () => void) => void;
  /** How a stop while staging ends the program. Default: said on stderr, exit 1. */
  onStopExit?: (message: string) => void;
  /** Test-only: told of every durable step of a journal (job/journal/journal.ts), to stop the Job there. */
  journalStep?: (name: string) => void;
  /** This Job's op id (FELIS_OP_ID, from its op-id label), written into its journals. */
  opId?: string;
  /** The browse Pod's indexes of big folders (job/listing/list-index.ts); a one-shot Job has none. */
  listIndexes?: ListIndexes;
  /** Test-only: a pull's resolver and request function (to spy on every connection it makes). */
  pullConnect?: { connect: NonNullable<PullSettings['connect']> };
  /** The undo trash (FELIS_TRASH*, FELIS_ACTOR). Default: on, seven days, no actor. */
  trash?: TrashSettings;
  /** Default `Date.now`: a trash record's time, and what has expired. */
  now?: () => number;
}

export interface OpContext {
  root: WorldRoot;
  statfs: (path: string) => StatfsLike;
  chown: (path: string, uid: number, gid: number) => void;
  fsync: (fd: number) => void;
  randomBytes: (n: number) => Buffer;
  rename: (from: string, to: string) => void;
  syncfs: (path: string) => void;
  progress: (line: string) => void;
  /** What a stop signal does to the op under way (job/journal/stop.ts). */
  stop: StopGate;
  journalStep?: (name: string) => void;
  opId?: string;
  listIndexes?: ListIndexes;
  trash: TrashSettings;
  now: () => number;
}

/** Felis's limits: reads up to 1 MiB, writes up to 256 KiB, listings up to 2000 entries. */
export const MAX_READ_BYTES = 1 << 20;
export { MAX_WRITE_BYTES } from '../../lib/protocol/limits.ts';
export const MAX_ENTRIES = 2000;
/** Link hops the write target follows, independent of general resolution. */
export const MAX_WRITE_LINK_HOPS = 8;
/** The game's uid/gid: new files and folders are given back to it. */
export const GAME_UID = 1000;
export const GAME_GID = 1000;
