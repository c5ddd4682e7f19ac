/**
 * files-usage's op: what a folder holds on disk, its largest entries and files. Read-only; its own
 * flags, `--depth` and `--top`, carry the answer's shape (absent: the defaults).
 * @module
 */
import { type EncodeInput, type OpFlags, type OwnFlagValues, opContract } from '../../lib/protocol/op-contract.ts';

/** How deep the folders' own sizes go, and how many largest files: the route's bounds and defaults. */
export const USAGE_DEPTH = { min: 1, max: 3, default: 1 } as const;
export const USAGE_TOP = { min: 1, max: 100, default: 10 } as const;

const within = (v: number | undefined, b: { min: number; max: number }) => v === undefined || (Number.isInteger(v) && v >= b.min && v <= b.max);

const FLAGS = {
  depth: { kind: 'int', usage: `how deep the folders' sizes go (${USAGE_DEPTH.min}-${USAGE_DEPTH.max}, default ${USAGE_DEPTH.default})` },
  top: { kind: 'int', usage: `how many of the largest files (${USAGE_TOP.min}-${USAGE_TOP.max}, default ${USAGE_TOP.default})` },
} as const;
type Flags = OpFlags & OwnFlagValues<typeof FLAGS>;

/** What the Job is told: absent, the defaults. */
export interface UsageFields {
  depth?: number;
  top?: number;
}

export const usage = opContract(
  'usage',
  // Served by a browse Pod too, which keeps its last answers (job/usage-cache.ts).
  { serve: true, rootPath: true },
  {
    flags: FLAGS,
    encode: (f: EncodeInput<UsageFields>) => [...(f.depth !== undefined ? ['--depth', String(f.depth)] : []), ...(f.top !== undefined ? ['--top', String(f.top)] : [])],
    decode: (f: Flags): UsageFields => ({ ...(f.depth !== undefined ? { depth: f.depth } : {}), ...(f.top !== undefined ? { top: f.top } : {}) }),
    refuse: (f: Flags) =>
      !within(f.depth, USAGE_DEPTH) ? `-depth must be from ${USAGE_DEPTH.min} to ${USAGE_DEPTH.max}` : !within(f.top, USAGE_TOP) ? `-top must be from ${USAGE_TOP.min} to ${USAGE_TOP.max}` : undefined,
  },
);

// The report a usage Job writes (Result.report): the walk's figures (job/usage-walk.ts) and the
// volume's (job/usage.ts), decoded by result.ts. One shape on both sides of the log line.

export interface UsageChild {
  name: string;
  bytes: number;
  apparent_bytes: number;
  /** Files (every entry that is not a folder, links included) under it; 1 for a file. */
  files: number;
  is_dir: boolean;
  /** A folder's own children, while `depth` goes deeper. */
  children?: UsageChild[];
}

export interface LargestFile {
  /** From the world root. */
  path: string;
  bytes: number;
  apparent_bytes: number;
}

/** What the walk finds (usage-walk.ts): the report but the volume's figures. */
export interface UsageFigures {
  /** Cleaned, "" for the root. */
  path: string;
  /** Allocated bytes under the path, the folder itself included, each file once. */
  bytes: number;
  apparent_bytes: number;
  /** Names that are not folders (a file with two names is two files of its bytes once). */
  files: number;
  /** Folders under the path, not counting it. */
  dirs: number;
  /** The path's direct entries by bytes, largest first (then by name); at most CHILDREN_KEPT of each folder. */
  children: UsageChild[];
  /** The largest regular files, by bytes. */
  largest: LargestFile[];
  /** Allocated bytes of the undo trash and the ops' working files and folders under the path: in no other figure. */
  trash_bytes: number;
  /** The walk did not see everything (its time budget ran out, or a folder was too deep): the figures are what it saw. */
  truncated: boolean;
}

export interface UsageReport extends UsageFigures {
  /** The volume's size, and its free bytes plus what the whole undo trash holds; -1 when statfs failed. */
  capacity: number;
  free: number;
  /** When the walk ran (RFC 3339). */
  scanned_at: string;
}
