/**
 * External merge sort of byte records, so a plan over any number of archive entries needs a
 * bounded amount of memory: records are collected up to `chunkBytes`, sorted and written as a run
 * file; the runs are then merged (at most FAN_IN at a time, in several rounds if there are more),
 * reading each through a small buffer. Records compare as bytes (`Buffer.compare`).
 *
 * Run files live in a folder the caller owns (the extraction's working folder) and are removed by
 * it along with that folder; each sorter also removes its own runs once merged.
 *
 * @module
 */
import fs from 'node:fs';
import path from 'node:path';

/** Runs merged at once: each holds one read buffer (READ_BUFFER bytes). */
export const FAN_IN = 64;
const READ_BUFFER = 64 << 10;
const WRITE_BUFFER = 256 << 10;
/**
 * Records per chunk at most, whatever their size: the chunk's index (offset, length, order: 12
 * bytes a record) is then at most 1.5 MiB, and short records cannot multiply the bookkeeping.
 */
export const MAX_CHUNK_RECORDS = 1 << 17;

class RunWriter {
  readonly #fd: number;
  #buf = Buffer.allocUnsafe(WRITE_BUFFER);
  #n = 0;
  constructor(file: string) {
    this.#fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL, 0o600);
  }
  write(rec: Buffer, start = 0, end = rec.length): void {
    const len = end - start;
    const need = 4 + len;
    if (this.#n + need > this.#buf.length) this.#flush();
    if (need > this.#buf.length) this.#buf = Buffer.allocUnsafe(need);
    this.#buf.writeUInt32LE(len, this.#n);
    rec.copy(this.#buf, this.#n + 4, start, end);
    this.#n += need;
  }
  #flush(): void {
    let off = 0;
    while (off < this.#n) off += fs.writeSync(this.#fd, this.#buf, off, this.#n - off);
    this.#n = 0;
  }
  close(): void {
    this.#flush();
    fs.closeSync(this.#fd);
  }
}

class RunReader {
  readonly #fd: number;
  #buf = Buffer.allocUnsafe(READ_BUFFER);
  #start = 0;
  #end = 0;
  #eof = false;
  constructor(file: string) {
    this.#fd = fs.openSync(file, fs.constants.O_RDONLY);
  }
  /** Makes at least `n` bytes available from #start; false at a clean end of file. */
  #fill(n: number): boolean {
    while (this.#end - this.#start < n) {
      if (this.#eof) {
        if (this.#end === this.#start) return false;
        throw new Error('external sort: run file is truncated');
      }
      if (this.#start > 0) {
        this.#buf.copy(this.#buf, 0, this.#start, this.#end);
        this.#end -= this.#start;
        this.#start = 0;
      }
      if (this.#buf.length < n) {
        const bigger = Buffer.allocUnsafe(n);
        this.#buf.copy(bigger, 0, 0, this.#end);
        this.#buf = bigger;
      }
      const got = fs.readSync(this.#fd, this.#buf, this.#end, this.#buf.length - this.#end, null);
      if (got === 0) this.#eof = true;
      this.#end += got;
    }
    return true;
  }
  next(): Buffer | null {
    if (!this.#fill(4)) return null;
    const len = this.#buf.readUInt32LE(this.#start);
    if (!this.#fill(4 + len)) throw new Error('external sort: run file is truncated');
    // A copy: the record outlives the buffer's next refill.
    const rec = Buffer.from(this.#buf.subarray(this.#start + 4, this.#start + 4 + len));
    this.#start += 4 + len;
    return rec;
  }
  close(): void {
    fs.closeSync(this.#fd);
  }
}

/** A min-heap of the current record of each run. */
class Heap {
  readonly items: { rec: Buffer; src: number }[] = [];
  push(x: { rec: Buffer; src: number }): void {
    const a = this.items;
    a.push(x);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (Buffer.compare(a[p].rec, a[i].rec) <= 0) break;
      [a[p], a[i]] = [a[i], a[p]];
      i = p;
    }
  }
  pop(): { rec: Buffer; src: number } | undefined {
    const a = this.items;
    if (a.length === 0) return undefined;
    const top = a[0];
    const last = a.pop()!;
    if (a.length > 0) {
      a[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && Buffer.compare(a[l].rec, a[m].rec) < 0) m = l;
        if (r < a.length && Buffer.compare(a[r].rec, a[m].rec) < 0) m = r;
        if (m === i) break;
        [a[m], a[i]] = [a[i], a[m]];
        i = m;
      }
    }
    return top;
  }
}

export class ExternalSorter {
  readonly #dir: string;
  readonly #prefix: string;
  readonly #chunkBytes: number;
  /**
   * The chunk being collected: records copied end to end into one buffer, with their offsets and
   * lengths in typed arrays allocated once, so a chunk costs its bytes plus 8 per record and
   * leaves no garbage behind (not a Buffer or a number array per record).
   */
  #arena: Buffer;
  #used = 0;
  #n = 0;
  #offs = new Uint32Array(0);
  #lens = new Uint32Array(0);
  #runs: string[] = [];
  #seq = 0;
  #count = 0;

  /** `dir` is a folder the caller owns; run files are named `<prefix>-<n>` inside it. */
  constructor(dir: string, prefix: string, chunkBytes = 4 << 20) {
    this.#dir = dir;
    this.#prefix = prefix;
    this.#chunkBytes = chunkBytes;
    this.#arena = Buffer.allocUnsafe(Math.min(chunkBytes, 64 << 10));
  }

  /** Records added so far. */
  get count(): number {
    return this.#count;
  }
  /** Run files written so far (for tests and the bench). */
  get runCount(): number {
    return this.#runs.length;
  }

  /** Adds one record (copied). */
  add(rec: Buffer): void {
    if (this.#n > 0 && (this.#n >= MAX_CHUNK_RECORDS || this.#used + rec.length > this.#chunkBytes)) this.#spill();
    if (this.#used + rec.length > this.#arena.length) {
      // Grow towards the chunk size (or to fit one record longer than a chunk).
      const size = Math.max(this.#used + rec.length, Math.min(this.#chunkBytes, this.#arena.length * 2));
      const bigger = Buffer.allocUnsafe(size);
      this.#arena.copy(bigger, 0, 0, this.#used);
      this.#arena = bigger;
    }
    if (this.#n === this.#offs.length) {
      const cap = Math.min(MAX_CHUNK_RECORDS, Math.max(1024, this.#n * 2));
      const offs = new Uint32Array(cap);
      const lens = new Uint32Array(cap);
      offs.set(this.#offs);
      lens.set(this.#lens);
      this.#offs = offs;
      this.#lens = lens;
    }
    rec.copy(this.#arena, this.#used);
    this.#offs[this.#n] = this.#used;
    this.#lens[this.#n] = rec.length;
    this.#n++;
    this.#used += rec.length;
    this.#count++;
  }

  /** The chunk's record indices in byte order of the records. */
  #order(): Uint32Array {
    const a = this.#arena;
    const offs = this.#offs;
    const lens = this.#lens;
    const idx = new Uint32Array(this.#n);
    for (let i = 0; i < idx.length; i++) idx[i] = i;
    // buf.compare(target, tStart, tEnd, sStart, sEnd) compares the source range with the target range.
    return idx.sort((x, y) => a.compare(a, offs[y], offs[y] + lens[y], offs[x], offs[x] + lens[x]));
  }

  #reset(): void {
    this.#used = 0;
    this.#n = 0;
  }

  /** Lets the chunk's memory go once nothing more will be added. */
  #release(): void {
    this.#arena = Buffer.alloc(0);
    this.#offs = new Uint32Array(0);
    this.#lens = new Uint32Array(0);
  }

  #newRunName(): string {
    return path.join(this.#dir, `${this.#prefix}-${this.#seq++}`);
  }

  #spill(): void {
    const file = this.#newRunName();
    const w = new RunWriter(file);
    try {
      for (const i of this.#order()) w.write(this.#arena, this.#offs[i], this.#offs[i] + this.#lens[i]);
    } finally {
      w.close();
    }
    this.#runs.push(file);
    this.#reset();
  }

  /** Merges `files` into one new run and removes them. */
  #mergeToRun(files: string[]): string {
    const out = this.#newRunName();
    const w = new RunWriter(out);
    try {
      for (const rec of mergeRuns(files)) w.write(rec);
    } finally {
      w.close();
    }
    for (const f of files) fs.rmSync(f, { force: true });
    return out;
  }

  /**
   * All records in byte order (duplicates kept). Call once, after the last `add`. Memory: one
   * chunk while sorting the last one, then FAN_IN read buffers.
   */
  *sorted(): Generator<Buffer> {
    if (this.#runs.length === 0) {
      // Views into the arena: it is not written to again.
      const arena = this.#arena;
      for (const i of this.#order()) yield arena.subarray(this.#offs[i], this.#offs[i] + this.#lens[i]);
      this.#reset();
      this.#release();
      return;
    }
    if (this.#n > 0) this.#spill();
    this.#release();
    let runs = this.#runs;
    while (runs.length > FAN_IN) {
      const next: string[] = [];
      for (let i = 0; i < runs.length; i += FAN_IN) next.push(this.#mergeToRun(runs.slice(i, i + FAN_IN)));
      runs = next;
    }
    this.#runs = runs;
    try {
      yield* mergeRuns(runs);
    } finally {
      for (const f of runs) fs.rmSync(f, { force: true });
      this.#runs = [];
    }
  }
}

function* mergeRuns(files: string[]): Generator<Buffer> {
  const readers = files.map((f) => new RunReader(f));
  try {
    const heap = new Heap();
    readers.forEach((r, src) => {
      const rec = r.next();
      if (rec) heap.push({ rec, src });
    });
    for (let top = heap.pop(); top; top = heap.pop()) {
      yield top.rec;
      const rec = readers[top.src].next();
      if (rec) heap.push({ rec, src: top.src });
    }
  } finally {
    for (const r of readers) r.close();
  }
}
