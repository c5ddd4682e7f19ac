/**
 * What an op receives: the request (from flags and env) and the context (the open root and the few
 * system calls a test may replace).
 *
 * @module
 */

import type { Batch } from '../../lib/protocol/batch-env.ts';
import type { ItemsOp, Op, OpFields } from '../../lib/protocol/ops.ts';
import type { TrashSettings } from '../../lib/protocol/trash-env.ts';
import type { StopGate } from '../journal/stop.ts';
import type { ListIndexes } from '../listing/list-index.ts';
import type { PullSettings } from '../pull/settings.ts';
import type { WorldRoot } from '../volume/root.ts';
import type { WarmResults } from './warm-results.ts';

/**
 * One `felis files` invocation, as `execute` takes it: one op's request, its fields those its
 * contract's flags carry (functions/<name>/op.ts), any of them absent as in a test's call, and what the
 * program adds from the env.
 */
export type OpRequestOf<K extends Op> = {
  op: K;
  /** Relative to the root; "" means the root. */
  path: string;
  /** Mount path of the world PVC (`--worlds-root`). */
  worldsRoot: string;
} & Partial<OpFields<K>> &
  FromEnv<K>;

/** Any op's request: `op` tells which. */
export type OpRequest = { [K in Op]: OpRequestOf<K> }[Op];
/** Any op's request but its root, which a test's world adds. */
export type OpCall = { [K in Op]: Omit<OpRequestOf<K>, 'worldsRoot'> }[Op];

/**
 * What the program reads from the env beside the flags: a write's bytes (FELIS_FILE_CONTENT_*;
 * absent means empty), the items of an op that carries them (FELIS_BATCH_*), a pull's URL with the
 * operator's rules (FELIS_PULL_*).
 */
type FromEnv<K extends Op> = (K extends ItemsOp ? { batch?: Batch } : unknown) & (K extends 'write' ? { content?: Buffer } : unknown) & (K extends 'pull' ? { pull?: PullSettings } : unknown);

/** Free-space figures as statfs reports them; free bytes = bavail × bsize. */
export interface StatfsLike {
  bavail: bigint | number;
  bsize: bigint | number;
  /** The volume's size in blocks (what a disk-usage answer calls its capacity); a fake may leave it out. */
  blocks?: bigint | number;
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
  /** The browse Pod's kept disk usage answers (warm-results.ts); a one-shot Job has none. */
  warm?: WarmResults;
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
  warm?: WarmResults;
  trash: TrashSettings;
  now: () => number;
}

/** The limits: reads up to 1 MiB (Felis's), writes as much (Felis's 256 KiB in the env: the function holds to it), listings up to 2000 entries. */
export { MAX_READ_BYTES, MAX_WRITE_BYTES } from '../../lib/protocol/limits.ts';
export { PLAIN_LIST_ENTRIES as MAX_ENTRIES } from '../../lib/protocol/op-query.ts';
/** Link hops the write target follows, independent of general resolution. */
export const MAX_WRITE_LINK_HOPS = 8;
/** The game's uid/gid: new files and folders are given back to it. */
export const GAME_UID = 1000;
export const GAME_GID = 1000;
