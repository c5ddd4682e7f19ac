/**
 * The content test of a search: a literal text found in a file's bytes, ASCII letters in any case,
 * every other byte exactly (so Unicode text matches itself, byte for byte, and nothing else). No
 * regular expression is built from the caller's text: matching is a byte compare, linear in the
 * bytes read.
 *
 * Speed without a regex engine: the needle's rarest byte (by a rough frequency of text bytes) is
 * looked for with Buffer.indexOf (native memchr; both cases for a letter), and only there is the
 * whole needle compared. Folding is ASCII only, a table lookup per byte compared.
 *
 * A file is read in blocks into one reused buffer; each block keeps the bytes a match could still
 * need from the one before (the needle's length less one, and the line context shown), so a match
 * across a block edge is found exactly once. One match per line (the first): a line is a result,
 * as grep reports it. `line` is 1-based; `column` is 1-based in bytes from the line's start (exact
 * however long the line, whatever its encoding); `text` is the line around the match, at most
 * CONTENT_TEXT_MAX_BYTES bytes (so at most as many characters), cut on character boundaries, always
 * valid UTF-8 (invalid bytes show as U+FFFD), without its line end.
 *
 * Pure but for the `read` a caller passes (a file descriptor's pread, or bytes in memory).
 * @module
 */
import { CONTENT_TEXT_MAX_BYTES } from '../../../lib/protocol/limits.ts';

export interface ContentHit {
  line: number;
  /** 1-based, in bytes from the line's start. */
  column: number;
  text: string;
}

/** The text to find, folded, and the byte to look for first. */
export interface Needle {
  /** ASCII lower-cased UTF-8 bytes. */
  bytes: Uint8Array;
  /** Index in `bytes` of the byte looked for first, and its two cases (the same byte when not a letter). */
  at: number;
  lo: number;
  up: number;
}

/** How a file's scan ended. */
export type ScanEnd = 'done' | 'binary' | 'too-large' | 'stopped' | 'budget';

/** A NUL in the first this many bytes marks a file binary (grep's rule, in short). */
export const BINARY_PROBE_BYTES = 8 << 10;
const BLOCK_BYTES = 256 << 10;
const NL = 0x0a;
const CR = 0x0d;

const FOLD = new Uint8Array(256);
for (let i = 0; i < 256; i++) FOLD[i] = i >= 0x41 && i <= 0x5a ? i + 0x20 : i;

/**
 * Bytes of configs, logs and JSON, most frequent first (a rough English and config frequency);
 * any byte not here counts as rare. Letters are lower case: both cases count as one.
 */
const COMMON = ' etaoinsrhl\ndcu:m0f1p2g."w-y3b,v5=4_9876k/[]x{}jqz\t';

function rank(b: number): number {
  const i = COMMON.indexOf(String.fromCharCode(FOLD[b]));
  return i < 0 ? COMMON.length : i;
}

/** The needle for a text (1..CONTENT_MAX_BYTES bytes, checked by the caller). */
export function needleOf(text: string): Needle {
  const raw = Buffer.from(text, 'utf8');
  const bytes = Uint8Array.from(raw, (b) => FOLD[b]);
  let at = 0;
  for (let i = 1; i < bytes.length; i++) if (rank(bytes[i]) > rank(bytes[at])) at = i;
  const lo = bytes[at];
  const up = lo >= 0x61 && lo <= 0x7a ? lo - 0x20 : lo;
  return { bytes, at, lo, up };
}

/** Does the needle start at `s` in `h` (enough bytes there)? */
function matchesAt(h: Uint8Array, s: number, nb: Uint8Array): boolean {
  for (let j = 0; j < nb.length; j++) if (FOLD[h[s + j]] !== nb[j]) return false;
  return true;
}

/**
 * The first start in [from, to) of the needle in `h`, or -1. `h` holds at least the needle's
 * length past `to - 1`. Candidates come from a native scan for the rare byte.
 */
export function findIn(h: Buffer, from: number, to: number, n: Needle): number {
  const k = n.at;
  const end = to + k;
  if (from >= to) return -1;
  if (n.lo === n.up) {
    for (let pos = from + k; ; ) {
      const c = h.indexOf(n.lo, pos);
      if (c < 0 || c >= end) return -1;
      if (matchesAt(h, c - k, n.bytes)) return c - k;
      pos = c + 1;
    }
  }
  let a = h.indexOf(n.lo, from + k);
  let b = h.indexOf(n.up, from + k);
  for (;;) {
    let c: number;
    if (a >= 0 && (b < 0 || a < b)) {
      c = a;
      if (c >= end) return -1;
      a = h.indexOf(n.lo, c + 1);
    } else if (b >= 0) {
      c = b;
      if (c >= end) return -1;
      b = h.indexOf(n.up, c + 1);
    } else {
      return -1;
    }
    if (matchesAt(h, c - k, n.bytes)) return c - k;
  }
}

/** Line ends in h[from, to): how many, and the index just after the last one (-1: none). */
function lineEnds(h: Buffer, from: number, to: number): { count: number; after: number } {
  let count = 0;
  let after = -1;
  for (let i = from; ; ) {
    const nl = h.indexOf(NL, i);
    if (nl < 0 || nl >= to) break;
    count++;
    after = nl + 1;
    i = after;
  }
  return { count, after };
}

/**
 * The line around a match at `s` (length `m`) in `h`: the line starts at `lineFrom` (or earlier,
 * outside `h`) and ends at its next line end or at `h`'s end. At most CONTENT_TEXT_MAX_BYTES bytes,
 * the room beside the match shared between both sides, cut on UTF-8 character boundaries.
 */
export function lineText(h: Buffer, s: number, m: number, lineFrom: number, max = CONTENT_TEXT_MAX_BYTES): string {
  const nl = h.indexOf(NL, s + m);
  let lineEnd = nl < 0 ? h.length : nl;
  if (lineEnd > s + m && h[lineEnd - 1] === CR && nl >= 0) lineEnd--;
  const room = Math.max(0, max - m);
  const rightHas = lineEnd - (s + m);
  let left = Math.min(s - lineFrom, room >> 1);
  const right = Math.min(rightHas, room - left);
  left = Math.min(s - lineFrom, room - right);
  let a = s - left;
  let z = s + m + right;
  // A cut start: skip continuation bytes up to the next character's first byte (at a line's
  // true start there are none in valid UTF-8, so this never drops a character there).
  while (a < s && (h[a] & 0xc0) === 0x80) a++;
  // A cut end: drop a character whose bytes run past the cut.
  if (z < lineEnd) z = completeEnd(h, s + m, z);
  return h.toString('utf8', a, z);
}

/** `z`, or the start of a UTF-8 sequence that `z` cuts (never before `min`). */
function completeEnd(h: Buffer, min: number, z: number): number {
  for (let i = z - 1; i >= Math.max(min, z - 4); i--) {
    const b = h[i];
    if ((b & 0xc0) === 0x80) continue;
    const len = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return i + len > z ? i : z;
  }
  return z;
}

export interface ScanFile {
  /** The file's size when opened: no more is read. */
  size: number;
  /** pread: fills buf[off, off+len) from the file's byte `pos`; 0 at its end. */
  read: (buf: Buffer, off: number, len: number, pos: number) => number;
  /** Called for each match; false stops the scan (`stopped`). */
  onMatch: (hit: ContentHit) => boolean;
}

export interface ScannerOptions {
  /** A larger file is probed for NUL only, then `too-large`. */
  maxFileBytes: number;
  /** Bytes all scans together may still read; each scan takes what it reads. */
  budget: { bytes: number };
  /** True once the time budget is spent; asked between blocks. */
  pastBudget: () => Promise<boolean>;
  /** Tests pass a tiny one to put matches across block edges. */
  blockBytes?: number;
  /** The line context kept before and after a match (default CONTENT_TEXT_MAX_BYTES). */
  textBytes?: number;
}

/** A scanner for one needle: its buffers are reused from file to file. */
export function contentScanner(n: Needle, o: ScannerOptions): (f: ScanFile) => Promise<ScanEnd> {
  const m = n.bytes.length;
  const textBytes = o.textBytes ?? CONTENT_TEXT_MAX_BYTES;
  const block = Math.max(o.blockBytes ?? BLOCK_BYTES, 1);
  // Kept past a block's last match start: the rest of a match and the context after it.
  const tailKeep = m - 1 + textBytes;
  const buf = Buffer.allocUnsafe(block + tailKeep + textBytes);
  const scratch = Buffer.allocUnsafe(64 << 10);

  return async (f) => {
    let base = 0; // the file offset of buf[0]
    let have = 0;
    let ended = false;
    let outOfBytes = false;
    /** Reads until `upTo` bytes are buffered, the file's size is reached, or the byte budget is. */
    const fill = (upTo: number) => {
      while (have < upTo && !ended) {
        if (base + have >= f.size) {
          ended = true;
          break;
        }
        const want = Math.min(upTo - have, f.size - (base + have), o.budget.bytes);
        if (want <= 0) {
          outOfBytes = true;
          break;
        }
        const got = f.read(buf, have, want, base + have);
        if (got === 0) ended = true; // shrank since it was opened
        have += got;
        o.budget.bytes -= got;
      }
    };

    fill(Math.min(BINARY_PROBE_BYTES, buf.length));
    if (buf.subarray(0, Math.min(have, BINARY_PROBE_BYTES)).indexOf(0) >= 0) return 'binary';
    if (f.size > o.maxFileBytes) return 'too-large';

    let next = 0; // the first file offset a match may still start at
    let skipLine = false; // the line holding `next` already had its match
    let line = 1; // the line of `counted`
    let lineStart = 0; // the file offset that line starts at
    let counted = 0; // line ends are counted up to here
    /** Counts line ends up to `abs`, re-reading what the buffer no longer holds. */
    const countTo = (abs: number) => {
      for (let pos = counted; pos < Math.min(base, abs); ) {
        const got = f.read(scratch, 0, Math.min(scratch.length, Math.min(base, abs) - pos), pos);
        if (got === 0) break;
        const e = lineEnds(scratch, 0, got);
        line += e.count;
        if (e.after >= 0) lineStart = pos + e.after;
        pos += got;
      }
      const from = Math.max(counted, base) - base;
      const e = lineEnds(buf, from, abs - base);
      line += e.count;
      if (e.after >= 0) lineStart = base + e.after;
      counted = abs;
    };

    for (;;) {
      fill(buf.length);
      const view = buf.subarray(0, have);
      const end = base + have;
      const limit = ended ? end - m + 1 : end - tailKeep;
      if (skipLine) {
        const nl = view.indexOf(NL, next - base);
        if (nl < 0) next = end;
        else {
          next = base + nl + 1;
          skipLine = false;
        }
      }
      while (next < limit) {
        const s = findIn(view, next - base, limit - base, n);
        if (s < 0) {
          next = limit;
          break;
        }
        countTo(base + s);
        const hit = { line, column: base + s - lineStart + 1, text: lineText(view, s, m, Math.max(lineStart - base, 0), textBytes) };
        if (!f.onMatch(hit)) return 'stopped';
        const nl = view.indexOf(NL, s + m);
        if (nl < 0) {
          next = end;
          skipLine = true;
        } else next = base + nl + 1;
      }
      if (ended) return 'done';
      if (outOfBytes || (await o.pastBudget())) return 'budget';
      // Keep what a later match can need: from the context before the next possible start.
      const keepFrom = Math.max(0, Math.min(next, limit) - base - textBytes);
      buf.copyWithin(0, keepFrom, have);
      base += keepFrom;
      have -= keepFrom;
    }
  };
}
