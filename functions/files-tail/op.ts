/**
 * files-tail's op: the last lines of a file (a log), read backwards from its end with bounded
 * bytes. Read-only; its own flag `--lines` says how many (absent: the default).
 * @module
 */
import { type EncodeInput, type OpFlags, type OwnFlagValues, opContract } from '../../lib/protocol/op-contract.ts';

/** How many lines: the route's bounds and default. */
export const TAIL_LINES = { min: 1, max: 5000, default: 100 } as const;
/** The most bytes a tail reads back from the end, and the longest line it shows whole. */
export const TAIL_MAX_SCAN = 1 << 20;
export const TAIL_MAX_LINE = 16 << 10;

const FLAGS = {
  lines: { kind: 'int', usage: `tail: how many of the last lines (${TAIL_LINES.min}-${TAIL_LINES.max}, default ${TAIL_LINES.default})` },
} as const;
type Flags = OpFlags & OwnFlagValues<typeof FLAGS>;

export interface TailFields {
  lines?: number;
}

export const tail = opContract(
  'tail',
  {},
  {
    flags: FLAGS,
    encode: (f: EncodeInput<TailFields>) => (f.lines !== undefined ? ['--lines', String(f.lines)] : []),
    decode: (f: Flags): TailFields => (f.lines !== undefined ? { lines: f.lines } : {}),
    refuse: (f: Flags) =>
      f.lines !== undefined && !(Number.isInteger(f.lines) && f.lines >= TAIL_LINES.min && f.lines <= TAIL_LINES.max) ? `-lines must be from ${TAIL_LINES.min} to ${TAIL_LINES.max}` : undefined,
  },
);

/** The report a tail Job writes (Result.report), decoded by result.ts. */
export interface TailReport {
  /** As asked, cleaned. */
  path: string;
  /** The last lines, oldest first, without their line ends. */
  lines: string[];
  /** Fewer lines than asked although the file has more (the 1 MiB scan ended first), or a line was cut. */
  truncated: boolean;
  /** The file's size when it was read: the lines end there (a follow goes on from it). */
  size: number;
}
