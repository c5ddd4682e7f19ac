/**
 * HTTP range rules for a file download (RFC 9110 §14), shared by the export Pod (which decides,
 * holding the descriptor and its stat) and the function (which only bounds what it forwards).
 *
 * - One range only: `bytes=a-b`, `bytes=a-`, `bytes=-n` (the unit case-insensitive, blanks
 *   around the range allowed). A header naming several ranges, another unit, or anything that
 *   does not parse is ignored, as RFC 9110 allows, and the whole file is answered (200).
 * - A range that starts at or past the end (or a suffix of 0 bytes, or any range of an empty
 *   file) is unsatisfiable: 416 with `Content-Range: bytes *\/<size>`.
 * - `If-Range` counts only when it is exactly our strong ETag: a date, a weak or another ETag
 *   means "the file changed", so the whole file is answered (200), never a splice.
 * - The ETag is strong, from the file's identity and version: device, inode, size, mtime and
 *   ctime in nanoseconds, hashed (so a rewrite, even to the same size and a reset mtime, changes
 *   it: ctime cannot be set back). Bytes sent from memory take an ETag of those bytes.
 * @module
 */
import { createHash } from 'node:crypto';

/** The most of a `Range` or `If-Range` header anyone looks at; longer is not a range of ours. */
export const MAX_RANGE_HEADER = 200;

/** What a request asked about ranges, bounded (`{}` when it asked nothing usable). */
export interface RangeAsk {
  range?: string;
  ifRange?: string;
}

export type RangeDecision =
  /** The whole file, 200. */
  | { kind: 'whole' }
  /** Bytes `start`..`end` inclusive, 206. */
  | { kind: 'partial'; start: number; end: number }
  /** 416, `Content-Range: bytes *\/size`. */
  | { kind: 'unsatisfiable' };

/**
 * The range headers of a request as worth forwarding: a header over the bound is no range of
 * ours, and an `If-Range` over it could never match, so either drops the pair (the whole file).
 * A `Range` alone stays a `Range` alone; an `If-Range` without a `Range` means nothing.
 */
export function rangeAsk(range: string | string[] | undefined, ifRange: string | string[] | undefined): RangeAsk {
  if (typeof range !== 'string' || range.length > MAX_RANGE_HEADER) return {};
  if (ifRange === undefined) return { range };
  if (typeof ifRange !== 'string' || ifRange.length > MAX_RANGE_HEADER) return {};
  return { range, ifRange };
}

const DIGITS = /^\d+$/;
/** Digits as a number; more than 15 of them is past any file (Infinity). */
const num = (s: string) => (s.length > 15 ? Infinity : Number(s));

/**
 * Parses one `Range` header against a file of `size` bytes. Undefined: ignore it (absent, not
 * bytes, several ranges, malformed, `a-b` with b < a), and answer the whole file.
 */
export function parseRange(header: string | undefined, size: number): RangeDecision | undefined {
  if (header === undefined) return undefined;
  const m = /^bytes=[ \t]*([^,]*?)[ \t]*$/i.exec(header);
  if (!m) return undefined;
  const spec = m[1]!;
  const dash = spec.indexOf('-');
  if (dash < 0) return undefined;
  const a = spec.slice(0, dash);
  const b = spec.slice(dash + 1);
  if (a === '') {
    if (!DIGITS.test(b)) return undefined;
    const n = num(b);
    if (n === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'partial', start: Math.max(0, size - n), end: size - 1 };
  }
  if (!DIGITS.test(a) || (b !== '' && !DIGITS.test(b))) return undefined;
  const start = num(a);
  const last = b === '' ? Infinity : num(b);
  if (last < start) return undefined;
  if (start >= size) return { kind: 'unsatisfiable' };
  return { kind: 'partial', start, end: Math.min(last, size - 1) };
}

/**
 * What to answer for a file of `size` bytes whose ETag is `etag`: the range asked for when there
 * is one and `If-Range` (if sent) is exactly `etag`; else the whole file.
 */
export function decideRange(ask: RangeAsk, size: number, etag: string): RangeDecision {
  if (ask.range === undefined) return { kind: 'whole' };
  if (ask.ifRange !== undefined && ask.ifRange.trim() !== etag) return { kind: 'whole' };
  return parseRange(ask.range, size) ?? { kind: 'whole' };
}

/** `Content-Range` of an answer: `bytes a-b/size` for a part, `bytes *\/size` for a 416. */
export function contentRange(d: RangeDecision, size: number): string | undefined {
  if (d.kind === 'partial') return `bytes ${d.start}-${d.end}/${size}`;
  if (d.kind === 'unsatisfiable') return `bytes */${size}`;
  return undefined;
}

export interface FileVersion {
  dev: bigint;
  ino: bigint;
  size: bigint;
  mtimeNs: bigint;
  ctimeNs: bigint;
}

const tag = (prefix: string, h: string) => `"${prefix}${h.slice(0, 24)}"`;

/** The strong ETag of a file as it is now: its identity and version, hashed. */
export function fileEtag(v: FileVersion): string {
  return tag('f', createHash('sha256').update(`${v.dev}:${v.ino}:${v.size}:${v.mtimeNs}:${v.ctimeNs}`).digest('base64url'));
}

/** The strong ETag of bytes sent from memory (the redacted server.properties): of those bytes. */
export function bytesEtag(b: Buffer): string {
  return tag('b', createHash('sha256').update(b).digest('base64url'));
}

/** What a relayed `ETag` / `Content-Range` may look like (anything else is not relayed). */
export const ETAG_SHAPE = /^"[!#-~]{1,64}"$/;
export const CONTENT_RANGE_SHAPE = /^bytes (?:\d{1,16}-\d{1,16}|\*)\/\d{1,16}$/;
