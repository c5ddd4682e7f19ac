/**
 * files-nbt's op: one NBT file read as typed JSON (job/nbt.ts). Read-only, no flags of its own.
 * The typed JSON form, the limits and the report are declared here, the one shape both sides of
 * the log line use (docs/world-tools.md, "NBT as JSON").
 * @module
 */
import { opContract } from '../../lib/protocol/op-contract.ts';

export const nbt = opContract('nbt', {});

/** The tag types by their id in the file (0 to 12). */
export const NBT_TYPES = ['end', 'byte', 'short', 'int', 'long', 'float', 'double', 'byteArray', 'string', 'list', 'compound', 'intArray', 'longArray'] as const;
export type NbtType = (typeof NBT_TYPES)[number];

/** How the file is stored: gzip (level.dat, playerdata), zlib, or bare NBT. */
export const NBT_COMPRESSIONS = ['gzip', 'zlib', 'none'] as const;
export type NbtCompression = (typeof NBT_COMPRESSIONS)[number];

/** A float or double JSON cannot spell as a number: NaN, the infinities, and -0 (JSON's 0 has no sign). */
export type NbtFloat = number | 'NaN' | 'Infinity' | '-Infinity' | '-0';
/** A long, as a decimal string: a JSON number loses what is beyond 2^53. */
export type NbtLong = string;
export type NbtCompound = { [name: string]: NbtTag };
/** A list's value: its element type (`end` for a list that never had one) and its elements' values. */
export interface NbtListValue {
  type: NbtType;
  value: NbtValue[];
}
export type NbtValue = number | NbtFloat | NbtLong | number[] | NbtLong[] | NbtListValue | NbtCompound;
export interface NbtTag {
  type: NbtType;
  value: NbtValue;
}
/** A file's root: a named compound (its name is "" in every file the game writes). */
export interface NbtRoot {
  type: 'compound';
  name: string;
  value: NbtCompound;
}

/** The largest file read (on disk), what it may decompress to, and the deepest nesting (the game's own bound). */
export const NBT_FILE_MAX_BYTES = 8 << 20;
export const NBT_PAYLOAD_MAX_BYTES = 32 << 20;
export const NBT_MAX_DEPTH = 512;
/** The longest JSON of a root the Job answers: its result line must stay under the log reader's 4 MiB. */
export const NBT_JSON_MAX_CHARS = 3 << 20;

/** What an nbt Job answers (Result.report), decoded by result.ts. */
export interface NbtReport {
  /** Cleaned, as the caller's path. */
  path: string;
  compression: NbtCompression;
  /** Of the file's bytes on disk (what a write's expect_sha256 names). */
  sha256: string;
  /** Of the decompressed NBT: a write whose encoding hashes the same changes nothing. */
  payload_sha256: string;
  root: NbtRoot;
}
