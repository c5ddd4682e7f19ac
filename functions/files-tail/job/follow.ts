/**
 * Following a log: the lines written to a file after a given offset, as they come, polling its
 * size every `pollMs`, and going on through a rotation of it — the file renamed away (to
 * `logs/<date>-N.log.gz` once compressed) and a new one made under its name. A rotation is seen as
 * the name's inode changing or its size shrinking below what was read; the rest of the old file
 * is read to its end first (the game may have written its last lines just before), then the name
 * is opened again and read from 0. Memory is bounded: a block and at most `maxLine` bytes of a
 * line not yet ended; a longer line is cut and marked as a tail cuts it, the rest of it skipped.
 * @module
 */
import fs from 'node:fs';
import { cutMark, NEWLINE } from './last-lines.ts';

/** The file, opened by its name (links inside followed, the withheld file refused: the caller's rules). */
export interface FollowedFile {
  /** Opens the name now; throws as the open fails (a missing name between rename and create included). */
  open(): number;
  /** The inode and size of what the name names now, or null when nothing does. */
  stat(): { ino: bigint; size: bigint } | null;
}

/** A line as it is sent: its text and the event id a reconnect resumes after (`<inode>:<offset of its end>`). */
export interface FollowedLine {
  id: string;
  line: string;
}

export interface FollowOptions {
  /** Where to start: `<inode>:<offset>` of the last line seen (resume), or the offset in the file as it is now. */
  from: { ino?: bigint; offset: number };
  pollMs: number;
  maxLine: number;
  signal: AbortSignal;
  block?: number;
  /** Waits `ms` (or until the signal); tests pass their own clock. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

const sleepFor = (ms: number, signal: AbortSignal) =>
  new Promise<void>((ok) => {
    if (signal.aborted) return ok();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      ok();
    }
    signal.addEventListener('abort', done, { once: true });
  });

/** The lines appended after `from`, in order, each once, until the signal; a rotation is read through. */
export async function* follow(file: FollowedFile, o: FollowOptions): AsyncGenerator<FollowedLine> {
  const block = o.block ?? 64 << 10;
  const sleep = o.sleep ?? sleepFor;
  const buf = Buffer.allocUnsafe(block);
  let fd = -1;
  let ino = 0n;
  let pos = 0;
  /** Bytes of the line not yet ended, at most maxLine; `skipped` counts what was dropped past them. */
  let partial: Buffer[] = [];
  let partialLen = 0;
  let skipped = 0;

  const open = (): boolean => {
    try {
      fd = file.open();
    } catch {
      return false; // renamed away and not made again yet: the next poll tries again
    }
    ino = fs.fstatSync(fd, { bigint: true }).ino;
    return true;
  };
  const close = () => {
    if (fd >= 0) fs.closeSync(fd);
    fd = -1;
  };
  const lineOut = (tail: Buffer): FollowedLine => {
    let bytes = partialLen > 0 ? Buffer.concat([...partial, tail]) : tail;
    partial = [];
    partialLen = 0;
    let text: string;
    if (bytes.length > o.maxLine || skipped > 0) {
      let at = Math.min(o.maxLine, bytes.length);
      while (at > 0 && at < bytes.length && (bytes[at]! & 0xc0) === 0x80) at--;
      const left = bytes.length - at + skipped;
      text = bytes.subarray(0, at).toString('utf8') + cutMark(left);
    } else {
      if (bytes.length > 0 && bytes[bytes.length - 1] === 0x0d) bytes = bytes.subarray(0, bytes.length - 1);
      text = bytes.toString('utf8');
    }
    skipped = 0;
    return { id: `${ino}:${pos}`, line: text };
  };
  const keep = (piece: Buffer) => {
    const room = o.maxLine + 1 - partialLen; // one byte past the cap tells a cut
    if (room <= 0) skipped += piece.length;
    else {
      const kept = piece.length <= room ? piece : piece.subarray(0, room);
      partial.push(Buffer.from(kept));
      partialLen += kept.length;
      skipped += piece.length - kept.length;
    }
  };
  /** Reads what the open file holds past `pos`, a block at a time, and yields its ended lines. */
  function* drain(): Generator<FollowedLine> {
    for (;;) {
      const n = fs.readSync(fd, buf, 0, block, pos);
      if (n === 0) return;
      let start = 0;
      for (let i = 0; i < n; i++) {
        if (buf[i] !== NEWLINE) continue;
        pos += i + 1 - start;
        yield lineOut(buf.subarray(start, i));
        start = i + 1;
      }
      if (start < n) {
        keep(buf.subarray(start, n));
        pos += n - start;
      }
    }
  }

  try {
    if (!open()) return;
    const size = Number(fs.fstatSync(fd).size);
    // A resume in the same file goes on where it was; in another (rotated since) from its start.
    pos = o.from.ino !== undefined && o.from.ino !== ino ? 0 : Math.min(Math.max(0, o.from.offset), size);
    while (!o.signal.aborted) {
      yield* drain();
      const now = file.stat();
      const rotated = now !== null && (now.ino !== ino || Number(now.size) < pos);
      if (rotated) {
        yield* drain(); // the last lines written to the old file before it moved
        if (partialLen > 0 || skipped > 0) yield lineOut(Buffer.alloc(0));
        close();
        pos = 0;
        if (!open()) {
          await sleep(o.pollMs, o.signal);
          while (!o.signal.aborted && !open()) await sleep(o.pollMs, o.signal);
          if (fd < 0) return;
        }
        continue;
      }
      await sleep(o.pollMs, o.signal);
    }
  } finally {
    close();
  }
}
