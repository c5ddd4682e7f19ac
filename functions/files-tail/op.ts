/**
 * files-tail's op: the last lines of a file (a log), read backwards from its end with bounded
 * bytes. Read-only; its own flag `--lines` says how many (absent: the default). With `--follow`
 * the Job serves the lines appended from then on (or after `--from`) on its Pod address instead
 * (job/follow-serve.ts), which files.tail's `follow=true` relays as Server-Sent Events.
 * @module
 */
import { type EncodeInput, type OpFlags, type OwnFlagValues, opContract } from '../../lib/protocol/op-contract.ts';

/** How many lines: the route's bounds and default. */
export const TAIL_LINES = { min: 1, max: 5000, default: 100 } as const;
/** The most bytes a tail reads back from the end, and the longest line it shows whole. */
export const TAIL_MAX_SCAN = 1 << 20;
export const TAIL_MAX_LINE = 16 << 10;

/** How long a follow lasts; its Job's deadline leaves room for the Job's start and its idle wait. */
export const FOLLOW_LIFETIME_SECONDS = 600;
export const FOLLOW_DEADLINE_SECONDS = FOLLOW_LIFETIME_SECONDS + 120;
/** Where a follow's Job serves its lines on its Pod address. */
export const FOLLOW_PATH = '/follow';
/** How many follows of one server run at once (their unfinished Jobs, counted by label). */
export const FOLLOW_MAX_PER_SERVER = 2;
/** A follow's event id, `<inode>:<offset>` (a bare offset is taken too): where a resume goes on. */
export const FOLLOW_ID = /^(?:(\d{1,20}):)?(\d{1,16})$/;
/** What a caller may resume from (`?from=`, `Last-Event-ID`): an id as the follow sent it, inode and offset. */
export const FOLLOW_EVENT_ID = /^\d{1,20}:\d{1,16}$/;

const FLAGS = {
  lines: { kind: 'int', usage: `tail: how many of the last lines (${TAIL_LINES.min}-${TAIL_LINES.max}, default ${TAIL_LINES.default})` },
  follow: { kind: 'bool', usage: 'tail: serve the lines appended from now on, on the Pod address (env FELIS_POD_IP, FELIS_SERVE_*)' },
  from: { kind: 'string', usage: 'tail --follow: the id (<inode>:<offset>) of the last line a caller saw' },
} as const;
type Flags = OpFlags & OwnFlagValues<typeof FLAGS>;

export interface TailFields {
  lines?: number;
  follow?: boolean;
  from?: string;
}

export const tail = opContract(
  'tail',
  {},
  {
    flags: FLAGS,
    encode: (f: EncodeInput<TailFields>) => [...(f.lines !== undefined ? ['--lines', String(f.lines)] : []), ...(f.follow ? ['--follow'] : []), ...(f.from !== undefined ? ['--from', f.from] : [])],
    decode: (f: Flags): TailFields => ({
      ...(f.lines !== undefined ? { lines: f.lines } : {}),
      ...(f.follow ? { follow: true } : {}),
      ...(f.from !== undefined ? { from: f.from } : {}),
    }),
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
