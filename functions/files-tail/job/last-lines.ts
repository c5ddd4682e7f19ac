/**
 * The last lines of a file, read backwards from its end in blocks: at most `lines` of them and at
 * most `maxScan` bytes read, whatever the file's size; a line longer than `maxLine` bytes keeps its
 * first `maxLine` bytes (cut on a character's start) and is marked. Lines split on `\n`; a `\r`
 * before it is dropped (CRLF); a last line without a newline is a line. The bytes are gathered
 * whole before any is decoded, so a character split by a block's edge is decoded whole. Pure but
 * for the positioned reads it is given.
 * @module
 */

/** What `lastLines` reads with: up to `len` bytes at `pos` into `buf`, the count read. */
export type ReadAt = (buf: Buffer, len: number, pos: number) => number;

export interface LastLinesOptions {
  lines: number;
  /** Bytes read at most, counted back from the end. */
  maxScan: number;
  /** A longer line keeps this many bytes and the mark. */
  maxLine: number;
  /** Bytes per backward read. */
  block?: number;
}

export interface LastLines {
  lines: string[];
  /** Fewer lines than asked although the file has more (the scan's bound), or a line was cut. */
  truncated: boolean;
}

export const NEWLINE = 0x0a;
const CR = 0x0d;
/** Ends a line cut at `maxLine` bytes, with how much of it was left out. */
export const cutMark = (left: number) => ` [… ${left} more bytes]`;

/** The last lines of a file of `size` bytes (the size when the read began: bytes appended since are not read). */
export function lastLines(readAt: ReadAt, size: number, o: LastLinesOptions): LastLines {
  const block = o.block ?? 64 << 10;
  if (o.lines <= 0 || size <= 0) return { lines: [], truncated: false };
  const parts: Buffer[] = [];
  let pos = size;
  let newlines = 0;
  // A newline that ends the file closes its last line; it starts none.
  let skipLast = true;
  let scanned = 0;
  while (pos > 0 && scanned < o.maxScan && newlines < o.lines) {
    const len = Math.min(block, pos, o.maxScan - scanned);
    const buf = Buffer.allocUnsafe(len);
    let got = 0;
    while (got < len) {
      const n = readAt(buf.subarray(got), len - got, pos - len + got);
      if (n === 0) break; // shrunk since its size was taken: what was read stands
      got += n;
    }
    const b = got === len ? buf : buf.subarray(0, got);
    pos -= len;
    scanned += len;
    parts.push(b);
    for (let i = b.length - 1; i >= 0; i--) {
      if (b[i] !== NEWLINE) continue;
      if (skipLast && pos + i === size - 1) continue;
      newlines++;
    }
    skipLast = false;
  }
  const all = Buffer.concat(parts.reverse());
  let text = all;
  if (text.length > 0 && text[text.length - 1] === NEWLINE) text = text.subarray(0, text.length - 1);
  const pieces: Buffer[] = [];
  let end = text.length;
  for (let i = text.length - 1; i >= -1 && pieces.length <= o.lines; i--) {
    if (i >= 0 && text[i] !== NEWLINE) continue;
    pieces.push(text.subarray(i + 1, end));
    end = i;
  }
  // The first piece starts a line only when the read reached the file's start or a newline before it.
  const fromStart = pos === 0;
  let truncated = false;
  if (pieces.length > o.lines) pieces.length = o.lines;
  else if (!fromStart) {
    pieces.pop(); // its start is further back than the scan went
    truncated = true;
  }
  const lines = pieces.reverse().map((p) => {
    let line = p.length > 0 && p[p.length - 1] === CR ? p.subarray(0, p.length - 1) : p;
    if (line.length > o.maxLine) {
      truncated = true;
      let at = o.maxLine;
      while (at > 0 && (line[at]! & 0xc0) === 0x80) at--; // not inside a character
      const left = line.length - at;
      line = line.subarray(0, at);
      return line.toString('utf8') + cutMark(left);
    }
    return line.toString('utf8');
  });
  return { lines, truncated };
}

/**
 * Where the last `lines` lines of a file of `size` bytes begin: the offset a follow starts from so
 * that its first events are the tail (each with its id). Read backwards as `lastLines` reads, with
 * the same bound: when the scan ends first, the first whole line it reached (or `size`, none).
 */
export function linesStart(readAt: ReadAt, size: number, o: Pick<LastLinesOptions, 'lines' | 'maxScan' | 'block'>): number {
  if (o.lines <= 0 || size <= 0) return Math.max(0, size);
  const block = o.block ?? 64 << 10;
  const buf = Buffer.allocUnsafe(block);
  let pos = size;
  let scanned = 0;
  let newlines = 0;
  let earliest = -1;
  while (pos > 0 && scanned < o.maxScan) {
    const len = Math.min(block, pos, o.maxScan - scanned);
    const from = pos - len;
    let got = 0;
    while (got < len) {
      const n = readAt(buf.subarray(got, len), len - got, from + got);
      if (n === 0) break;
      got += n;
    }
    pos = from;
    scanned += len;
    for (let i = got - 1; i >= 0; i--) {
      if (buf[i] !== NEWLINE || from + i === size - 1) continue; // a newline ending the file starts no line
      newlines++;
      earliest = from + i + 1;
      if (newlines === o.lines) return earliest;
    }
  }
  return pos === 0 ? 0 : earliest >= 0 ? earliest : size;
}
