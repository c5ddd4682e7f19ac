/**
 * files-region's ops: one region file's chunk table (`region`, read-only), what a prune would
 * remove (`region-plan`, read-only: the dry run) and the prune itself (`region-prune`, a journaled
 * background op). The prune's bound rides in `--below` as a decimal (an InhabitedTime is a long).
 * The reports both sides of the log line use are declared here (docs/world-tools.md, "Region files").
 * @module
 */
import { type EncodeInput, type OpFlags, type OwnFlagValues, opContract } from '../../lib/protocol/op-contract.ts';

/** The bound, as the Job reads it: a non-negative decimal of at most 19 digits (a long). */
export const BELOW = /^(0|[1-9]\d{0,18})$/;

const FLAGS = { below: { kind: 'string', usage: 'region-plan, region-prune: remove chunks whose InhabitedTime is below this many ticks' } } as const;
type Flags = OpFlags & OwnFlagValues<typeof FLAGS>;

export interface PruneFields {
  /** Decimal ticks. */
  below: string;
}

const pruneCodec = {
  flags: FLAGS,
  encode: (f: EncodeInput<PruneFields>) => ['--below', f.below ?? ''],
  decode: (f: Flags): PruneFields => ({ below: f.below ?? '' }),
  refuse: (f: Flags) => (f.below !== undefined && BELOW.test(f.below) && BigInt(f.below) <= 2n ** 63n - 1n ? undefined : '--below must be a number of ticks from 0 to 2^63-1'),
};

export const region = opContract('region', {});
export const regionPlan = opContract('region-plan', { rootPath: true }, pruneCodec);
export const regionPrune = opContract('region-prune', { mutates: true, chown: true, async: true, journaled: true, lostResult: 'settled', rootPath: true }, pruneCodec);

/** One chunk of the table. `inhabited_ticks`: a number, or a decimal string past ±(2^53-1); null when unreadable. */
export interface RegionChunk {
  x: number;
  z: number;
  sectors: number;
  /** The stored length (its length field); null when the slot cannot be trusted. */
  bytes: number | null;
  /** Seconds since 1970 of the chunk's last save, as the header keeps it. */
  timestamp: number;
  compression: 'gzip' | 'zlib' | 'none' | 'lz4' | 'custom' | 'unknown' | null;
  /** The payload is in `c.X.Z.mcc` beside the file. */
  external: boolean;
  inhabited_ticks: number | string | null;
  /** Why the chunk cannot be read (it is never pruned). */
  error?: string;
}

/** What a region Job answers (Result.report). */
export interface RegionReport {
  path: string;
  chunks: RegionChunk[];
  sectors_used: number;
  sectors_free: number;
}

/** One region file a prune changes (or would), or leaves alone and says why. */
export interface PruneFile {
  /** The region file, root-relative. */
  path: string;
  chunks_removed: number;
  /** Of the region file and its entities/ and poi/ files and external chunk files together. */
  bytes_freed: number;
  /** Every chunk goes: the file is removed (with its entities/ and poi/ files). */
  removed: boolean;
}

/** What a plan or a prune answers (Result.report). */
export interface PruneReport {
  /** The region folder pruned, root-relative. */
  region: string;
  below: string;
  /** Region files looked at. */
  scanned: number;
  /** How many region files change (or would): each with its entities/ and poi/ files. */
  files_changed: number;
  /** Those files, the first PRUNE_REPORT_FILES of them in name order. */
  files: PruneFile[];
  chunks_removed: number;
  bytes_freed: number;
  /** Chunks whose payload could not be read: kept. */
  unreadable_chunks: number;
  /** Region files left alone, and why (a corrupt header or slot, in it or in its entities/ or poi/ file; not a regular file). */
  skipped: { path: string; reason: string }[];
  /** The prune's undo-trash records (the old files), when the trash kept them. */
  trash_ids?: string[];
}

/** The largest number of files a report lists (the rest are counted): the result line stays far under the log reader's 4 MiB. */
export const PRUNE_REPORT_FILES = 2000;
