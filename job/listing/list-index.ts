/**
 * Sorted name indexes of big folders, kept by the browse Pod on its own scratch disk, so that a
 * later page of a folder of 500,000 entries reads a few thousand names from one file instead of
 * the whole directory. The one-shot Job never has one (no ListIndexes reaches its op).
 *
 * A paged scan of a folder records every name it reads (ListIndexes.record); when the folder had
 * more than INDEX_MIN_ENTRIES, the names are sorted after the answer is sent (an external sort:
 * bounded memory) into a file of records in the listing's order, with every SAMPLE_EVERY-th key
 * and its offset kept in memory for a binary search.
 *
 * An index is trusted only while the folder's (dev, ino, mtime, ctime) are those stat'ed before the
 * scan began, and only if the scan began more than RACY_NS after the folder's mtime: a change
 * within the timestamp's granularity of the scan could leave the mtime as it was (git's "racy"
 * rule). Otherwise it is removed and the page scanned. At most MAX_INDEXES are kept (least
 * recently used goes first), and at most MAX_SCRATCH_BYTES of them.
 *
 * @module
 */
import fs from 'node:fs';
import path from 'node:path';
import { ExternalSorter } from './external-sort.ts';

/** A folder of more entries than this gets an index. */
export const INDEX_MIN_ENTRIES = 20_000;
export const MAX_INDEXES = 4;
export const MAX_SCRATCH_BYTES = 256 << 20;
/** Names between two samples: a page's read starts at most this many names before its first. */
export const SAMPLE_EVERY = 1024;
/** A scan that began within this of the folder's mtime may have missed a change (racy). */
export const RACY_NS = 2_000_000_000n;
/** Names kept in memory while recording before they go to a file: a small folder never touches disk. */
const RECORD_BUFFER = 256 << 10;
const READ_BUFFER = 64 << 10;
/** Names the build sorts or writes between two turns of the event loop. */
const YIELD_EVERY = 4096;
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** What says a folder is as it was: its identity and its times, to the nanosecond. */
export interface FolderStamp {
  dev: bigint;
  ino: bigint;
  mtimeNs: bigint;
  ctimeNs: bigint;
}

export function stampOf(fd: number): FolderStamp {
  const st = fs.fstatSync(fd, { bigint: true });
  return { dev: st.dev, ino: st.ino, mtimeNs: st.mtimeNs, ctimeNs: st.ctimeNs };
}

const sameStamp = (a: FolderStamp, b: FolderStamp) => a.dev === b.dev && a.ino === b.ino && a.mtimeNs === b.mtimeNs && a.ctimeNs === b.ctimeNs;
const folderKey = (s: FolderStamp) => `${s.dev}:${s.ino}`;

/** One name of an index: its order key, its name (latin1 text), and its dirent type (`d`, `l`, `f`). */
export interface IndexedName {
  key: string;
  name: string;
  type: string;
}

/** A record: `key NUL (name if it differs from key) NUL type`; names hold no NUL, so bytes order by key, then name. */
function encode(key: string, name: string, type: string): string {
  return `${key}\0${name === key ? '' : name}\0${type}`;
}
function decode(rec: string): IndexedName {
  const a = rec.indexOf('\0');
  const b = rec.indexOf('\0', a + 1);
  const key = rec.slice(0, a);
  const name = rec.slice(a + 1, b);
  return { key, name: name === '' ? key : name, type: rec.slice(b + 1) };
}

/** A built index: the sorted file and its sample. */
class Index {
  readonly file: string;
  readonly bytes: number;
  readonly stamp: FolderStamp;
  readonly startedNs: bigint;
  readonly sampleKeys: string[];
  readonly sampleOffsets: number[];
  constructor(file: string, bytes: number, stamp: FolderStamp, startedNs: bigint, sampleKeys: string[], sampleOffsets: number[]) {
    this.file = file;
    this.bytes = bytes;
    this.stamp = stamp;
    this.startedNs = startedNs;
    this.sampleKeys = sampleKeys;
    this.sampleOffsets = sampleOffsets;
  }

  /** The offset to read from for names after `after`: that of the last sample not after it. */
  startFor(after: string | undefined): number {
    if (after === undefined) return 0;
    let lo = 0;
    let hi = this.sampleKeys.length; // first sample whose key > after
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.sampleKeys[mid]! <= after) lo = mid + 1;
      else hi = mid;
    }
    return lo === 0 ? 0 : this.sampleOffsets[lo - 1]!;
  }

  /** Names in order from `after` on (strictly after it), until `take` returns false. */
  read(after: string | undefined, take: (n: IndexedName) => boolean): void {
    const fd = fs.openSync(this.file, 'r');
    try {
      let pos = this.startFor(after);
      let buf = Buffer.allocUnsafe(READ_BUFFER);
      let start = 0;
      let end = 0;
      for (;;) {
        if (end - start < 4 || end - start < 4 + buf.readUInt32LE(start)) {
          // Keep the partial record, read more behind it.
          buf.copy(buf, 0, start, end);
          end -= start;
          start = 0;
          if (end >= 4 && 4 + buf.readUInt32LE(0) > buf.length) {
            const bigger = Buffer.allocUnsafe(4 + buf.readUInt32LE(0));
            buf.copy(bigger, 0, 0, end);
            buf = bigger;
          }
          const got = fs.readSync(fd, buf, end, buf.length - end, pos);
          if (got === 0) return;
          pos += got;
          end += got;
          continue;
        }
        const len = buf.readUInt32LE(start);
        const n = decode(buf.toString('latin1', start + 4, start + 4 + len));
        start += 4 + len;
        if (after !== undefined && n.key <= after) continue;
        if (!take(n)) return;
      }
    } finally {
      fs.closeSync(fd);
    }
  }
}

/** The names a scan read, on their way to an index (see ListIndexes.record). */
export class Recording {
  #buf = Buffer.allocUnsafe(RECORD_BUFFER);
  #n = 0;
  #fd: number | undefined;
  #bytes = 0;
  count = 0;
  #dead = false;
  readonly owner: ListIndexes;
  readonly stamp: FolderStamp;
  readonly startedNs: bigint;
  readonly rawFile: string;
  constructor(owner: ListIndexes, stamp: FolderStamp, startedNs: bigint, rawFile: string) {
    this.owner = owner;
    this.stamp = stamp;
    this.startedNs = startedNs;
    this.rawFile = rawFile;
  }

  /** One name as the scan read it (latin1 text), its order key and dirent type. */
  add(key: string, name: string, type: string): void {
    if (this.#dead) return;
    const rec = encode(key, name, type);
    const need = 4 + rec.length;
    if (this.#n + need > this.#buf.length) this.#flush();
    if (need > this.#buf.length) this.#buf = Buffer.allocUnsafe(need);
    this.#buf.writeUInt32LE(rec.length, this.#n);
    this.#buf.write(rec, this.#n + 4, 'latin1');
    this.#n += need;
    this.count++;
  }

  #flush(): void {
    if (this.#n === 0) return;
    this.#bytes += this.#n;
    // A folder bigger than the scratch may hold is not indexed.
    if (this.#bytes > this.owner.maxBytes) {
      this.abandon();
      return;
    }
    this.#fd ??= fs.openSync(this.rawFile, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_TRUNC, 0o600);
    let off = 0;
    while (off < this.#n) off += fs.writeSync(this.#fd, this.#buf, off, this.#n - off);
    this.#n = 0;
  }

  /** Nothing of it is kept (a scan that failed, a folder too big). */
  abandon(): void {
    this.#dead = true;
    this.#n = 0;
    if (this.#fd !== undefined) fs.closeSync(this.#fd);
    this.#fd = undefined;
    fs.rmSync(this.rawFile, { force: true });
    this.owner.forget(this);
  }

  /** The scan read the whole folder: an index is built soon after (not before the answer goes). */
  finish(): void {
    if (this.#dead) return;
    if (this.count <= this.owner.minEntries) {
      this.abandon();
      return;
    }
    this.#flush();
    if (this.#dead) return;
    fs.closeSync(this.#fd!);
    this.#fd = undefined;
    this.owner.schedule(this);
  }
}

export interface ListIndexesOptions {
  /** Wall-clock nanoseconds (tests move it). */
  now?: () => bigint;
  minEntries?: number;
  maxIndexes?: number;
  maxBytes?: number;
  /** Default setImmediate: the build runs after the page's answer is written. */
  defer?: (build: () => void) => void;
}

export class ListIndexes {
  readonly #dir: string;
  readonly #now: () => bigint;
  readonly minEntries: number;
  readonly maxIndexes: number;
  readonly maxBytes: number;
  readonly #defer: (build: () => void) => void;
  /** Built indexes by folder, least recently used first (a Map keeps insertion order). */
  readonly #built = new Map<string, Index>();
  /** Recordings under way or waiting for their build, by folder. */
  readonly #pending = new Map<string, Recording>();
  #seq = 0;
  #builds: Promise<void>[] = [];
  /** For tests and the bench: pages served from an index, indexes built and dropped. */
  readonly stats = { hits: 0, built: 0, dropped: 0 };

  /** `dir`: a writable folder of the Pod's own, never the world volume. */
  constructor(dir: string, opts: ListIndexesOptions = {}) {
    this.#dir = dir;
    this.#now = opts.now ?? (() => BigInt(Date.now()) * 1_000_000n);
    this.minEntries = opts.minEntries ?? INDEX_MIN_ENTRIES;
    this.maxIndexes = opts.maxIndexes ?? MAX_INDEXES;
    this.maxBytes = opts.maxBytes ?? MAX_SCRATCH_BYTES;
    this.#defer = opts.defer ?? ((f) => void setImmediate(f));
  }

  #racy(stamp: FolderStamp, startedNs: bigint): boolean {
    return startedNs <= stamp.mtimeNs + RACY_NS;
  }

  /** The folder's index if it can be trusted now (`stamp`: the folder stat'ed just now); an untrusted one is removed. */
  lookup(stamp: FolderStamp): Index | undefined {
    const k = folderKey(stamp);
    const ix = this.#built.get(k);
    if (ix === undefined) return undefined;
    if (!sameStamp(ix.stamp, stamp) || this.#racy(ix.stamp, ix.startedNs)) {
      this.#drop(k);
      return undefined;
    }
    // Most recently used goes last.
    this.#built.delete(k);
    this.#built.set(k, ix);
    this.stats.hits++;
    return ix;
  }

  /**
   * A recording of a scan about to begin (`stamp`: the folder stat'ed before reading it), or
   * undefined when none is worth making: one is under way, or the folder changed too recently for
   * an index to be trusted.
   */
  record(stamp: FolderStamp): Recording | undefined {
    const k = folderKey(stamp);
    if (this.#pending.has(k)) return undefined;
    const startedNs = this.#now();
    if (this.#racy(stamp, startedNs)) return undefined;
    const rec = new Recording(this, stamp, startedNs, path.join(this.#dir, `list-index-${process.pid}-${this.#seq++}.raw`));
    this.#pending.set(k, rec);
    return rec;
  }

  forget(rec: Recording): void {
    const k = folderKey(rec.stamp);
    if (this.#pending.get(k) === rec) this.#pending.delete(k);
  }

  schedule(rec: Recording): void {
    this.#builds.push(
      new Promise<void>((resolve) => {
        this.#defer(() => {
          this.#build(rec)
            .catch(() => {
              // No index: the pages are scanned, as without one.
            })
            .finally(() => {
              fs.rmSync(rec.rawFile, { force: true });
              this.forget(rec);
              resolve();
            });
        });
      }),
    );
  }

  /** Waits for the builds scheduled so far (tests, the bench). */
  async settled(): Promise<void> {
    const b = this.#builds;
    this.#builds = [];
    await Promise.all(b);
  }

  /**
   * Sorts a recording into an index. It gives the event loop a turn every YIELD_EVERY names: the
   * page that recorded them may still be on its way out (a body bigger than the socket's buffer),
   * and other pages are answered meanwhile (by a scan: the index is not there yet).
   */
  async #build(rec: Recording): Promise<void> {
    const sorted = path.join(this.#dir, `list-index-${process.pid}-${this.#seq++}.sorted`);
    try {
      await this.#sortInto(rec, sorted);
    } catch (e) {
      // The sort's run files (`<sorted>-<n>`) too: a full scratch disk must not stay full.
      const runs = `${path.basename(sorted)}-`;
      for (const f of fs.readdirSync(this.#dir)) if (f.startsWith(runs)) fs.rmSync(path.join(this.#dir, f), { force: true });
      fs.rmSync(sorted, { force: true });
      throw e;
    }
  }

  async #sortInto(rec: Recording, sorted: string): Promise<void> {
    const sorter = new ExternalSorter(this.#dir, path.basename(sorted), 2 << 20);
    const reader = new RecordReader(rec.rawFile);
    try {
      for (let i = 1, r = reader.next(); r; r = reader.next(), i++) {
        sorter.add(r);
        if (i % YIELD_EVERY === 0) await turn();
      }
    } finally {
      reader.close();
    }
    const keys: string[] = [];
    const offsets: number[] = [];
    const fd = fs.openSync(sorted, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_TRUNC, 0o600);
    let bytes = 0;
    try {
      const out = Buffer.allocUnsafe(256 << 10);
      let n = 0;
      let i = 0;
      const flush = () => {
        let off = 0;
        while (off < n) off += fs.writeSync(fd, out, off, n - off);
        n = 0;
      };
      for (const r of sorter.sorted()) {
        if (i > 0 && i % YIELD_EVERY === 0) await turn();
        if (i++ % SAMPLE_EVERY === 0) {
          keys.push(decode(r.toString('latin1')).key);
          offsets.push(bytes);
        }
        if (n + 4 + r.length > out.length) flush();
        const big = 4 + r.length > out.length;
        if (big) {
          const one = Buffer.allocUnsafe(4 + r.length);
          one.writeUInt32LE(r.length, 0);
          r.copy(one, 4);
          fs.writeSync(fd, one);
        } else {
          out.writeUInt32LE(r.length, n);
          r.copy(out, n + 4);
          n += 4 + r.length;
        }
        bytes += 4 + r.length;
      }
      flush();
    } catch (e) {
      fs.closeSync(fd);
      fs.rmSync(sorted, { force: true });
      throw e;
    }
    fs.closeSync(fd);
    const k = folderKey(rec.stamp);
    this.#drop(k);
    // Room for it: the least recently used go first.
    for (const [old] of this.#built) {
      if (this.#built.size < this.maxIndexes && this.#usedBytes() + bytes <= this.maxBytes) break;
      this.#drop(old);
    }
    if (this.#usedBytes() + bytes > this.maxBytes) {
      fs.rmSync(sorted, { force: true });
      return;
    }
    this.#built.set(k, new Index(sorted, bytes, rec.stamp, rec.startedNs, keys, offsets));
    this.stats.built++;
  }

  #usedBytes(): number {
    let sum = 0;
    for (const ix of this.#built.values()) sum += ix.bytes;
    return sum;
  }

  #drop(k: string): void {
    const ix = this.#built.get(k);
    if (ix === undefined) return;
    this.#built.delete(k);
    fs.rmSync(ix.file, { force: true });
    this.stats.dropped++;
  }

  /** Indexes kept now (tests). */
  get size(): number {
    return this.#built.size;
  }

  /** Removes every index file (the Pod stopping; tests). */
  close(): void {
    for (const k of [...this.#built.keys()]) this.#drop(k);
  }
}

/** The length-prefixed records of a file, one at a time: each a view valid until the next. */
class RecordReader {
  readonly #fd: number;
  #buf = Buffer.allocUnsafe(READ_BUFFER);
  #start = 0;
  #end = 0;
  constructor(file: string) {
    this.#fd = fs.openSync(file, 'r');
  }
  next(): Buffer | undefined {
    for (;;) {
      const have = this.#end - this.#start;
      if (have >= 4 && have >= 4 + this.#buf.readUInt32LE(this.#start)) {
        const len = this.#buf.readUInt32LE(this.#start);
        const r = this.#buf.subarray(this.#start + 4, this.#start + 4 + len);
        this.#start += 4 + len;
        return r;
      }
      this.#buf.copy(this.#buf, 0, this.#start, this.#end);
      this.#end = have;
      this.#start = 0;
      if (have >= 4 && 4 + this.#buf.readUInt32LE(0) > this.#buf.length) {
        const bigger = Buffer.allocUnsafe(4 + this.#buf.readUInt32LE(0));
        this.#buf.copy(bigger, 0, 0, have);
        this.#buf = bigger;
      }
      const got = fs.readSync(this.#fd, this.#buf, this.#end, this.#buf.length - this.#end, null);
      if (got === 0) return undefined;
      this.#end += got;
    }
  }
  close(): void {
    fs.closeSync(this.#fd);
  }
}

export type { Index };
