/**
 * The `.7z` and `.rar` (RAR4 and RAR5) pass: 7-Zip's technical listing (`l -slt`) read line by line
 * into entries, and, for the extraction, every file's data from one `x -so` run (all files' bytes
 * end to end, in the listing's order), cut into entries by their listed sizes. Both runs are
 * 7-Zip in worker threads (`sevenzip.ts`), read with backpressure, so a pass holds one entry and a
 * few buffers whatever the entry count; 7-Zip itself holds the archive's header database.
 *
 * The listing is parsed strictly: every record is the same set of `Key = value` lines, each key once;
 * anything else (an unknown shape, a key twice, a record without a path) fails the pass as damaged,
 * so a name cannot smuggle a record of its own. At the end, the data run must have produced exactly
 * the listed bytes and 7-Zip must have ended without an error.
 *
 * @module
 */
import fs from 'node:fs';
import type { EntryKind } from './names.ts';
import type { ArchiveEntry, ArchivePass } from './pass.ts';
import { Rar4Headers, rar4Kind } from './rar4-modes.ts';
import { Rar5Headers } from './rar5-headers.ts';
import { HEAP_MAX, type SevenZipEnd, SevenZipRun } from './sevenzip.ts';
import { ArchiveReadError } from './zip-reader.ts';

export type SevenZipFormat = '7z' | 'rar';

/** The largest dictionary (or PPMd model) we let 7-Zip allocate: it must fit in HEAP_MAX beside the headers. */
export const MAX_DICTIONARY = 32 << 20;
/**
 * The most entries an archive may list. 7-Zip holds an archive's whole header database in its
 * heap (HEAP_MAX); this many entries of ordinary names stay well inside it (docs/archives.md).
 */
export const MAX_ENTRIES = 150_000;

/** An archive 7-Zip's limits refuse (→ `too_large`): nothing was changed. */
export class ArchiveTooLargeError extends ArchiveReadError {
  constructor(message: string) {
    super(message);
    this.name = 'ArchiveTooLargeError';
  }
}
/** A password-protected archive or entry (→ the code an encrypted zip entry gets). */
export class ArchiveEncryptedError extends ArchiveReadError {
  constructor(message: string) {
    super(message);
    this.name = 'ArchiveEncryptedError';
  }
}

/** Switches every run shares: UTF-8 names, no prompt (a password is given, so none is ever asked), no progress. */
const COMMON = ['-sccUTF-8', '-scsUTF-8', '-bsp0', '-bb0', '-p-', '-y'];
const TYPES: Record<SevenZipFormat, ReadonlySet<string>> = { '7z': new Set(['7z']), rar: new Set(['Rar', 'Rar5']) };

export interface SevenZipEntry extends ArchiveEntry {
  crc32: number | undefined;
  /** Bytes of the entry in the data run (a folder's: none). */
  readonly streamBytes: number;
}

/** Splits a run's output into lines (LF; a CR before it is dropped), without holding more than one line. */
class Lines {
  readonly #run: SevenZipRun;
  #buf: Buffer = Buffer.alloc(0);
  #at = 0;
  #done = false;
  constructor(run: SevenZipRun) {
    this.#run = run;
  }
  /** The next line's bytes, or null at the end. */
  async next(): Promise<Buffer | null> {
    for (;;) {
      const nl = this.#buf.indexOf(0x0a, this.#at);
      if (nl >= 0) {
        const end = nl > this.#at && this.#buf[nl - 1] === 0x0d ? nl - 1 : nl;
        const line = this.#buf.subarray(this.#at, end);
        this.#at = nl + 1;
        return line;
      }
      if (this.#done) {
        if (this.#at >= this.#buf.length) return null;
        const line = this.#buf.subarray(this.#at);
        this.#at = this.#buf.length;
        return line;
      }
      const piece = await this.#run.read();
      const rest = this.#buf.subarray(this.#at);
      if (piece === null) this.#done = true;
      else if (rest.length > 64 << 10) throw new ArchiveReadError('the archive listing has a line over 64 KiB');
      this.#buf = piece === null ? Buffer.from(rest) : Buffer.concat([rest, piece]);
      this.#at = 0;
    }
  }
}

const KEYS = new Set([
  'Path',
  'Folder',
  'Size',
  'Packed Size',
  'Modified',
  'Created',
  'Accessed',
  'Attributes',
  'CRC',
  'Encrypted',
  'Method',
  'Block',
  'Host OS',
  'Version',
  'Volume Index',
  'Offset',
  'Characteristics',
  'Solid',
  'Split Before',
  'Split After',
  'Comment',
  'Symbolic Link',
  'Hard Link',
  'Copy Link',
  'Alternate Stream',
  'Checksum',
  'Commented',
  'Anti',
  'Link',
  'N-Bits',
  'Position',
  'Minimum Version',
  'Compressed',
  'Error',
  'Warning',
  'Open Warning',
  'Open Error',
  'Physical Size',
  'Type',
  'Tail Size',
  'Headers Size',
  'Blocks',
  'Multivolume',
  'Volumes',
  'Is Volume',
  'Encrypted Headers',
  'Locked',
  'Recovery',
  'First Volume',
  'Headers Encrypted',
  'Hard Link Count',
  'ID',
  'Read-only',
  'INode',
  'Name',
  'Total Physical Size',
  'Dictionary Size',
  'Unpack Version',
  'Tail',
  'Codepage',
  'SFX',
  'Creator Application',
  'Header Type',
  'Short Name',
  'Number of Links',
  'NT Security',
  'Warnings',
]);

function parseLine(line: Buffer): [string, Buffer] | null {
  const eq = line.indexOf(' = ');
  if (eq <= 0) return null;
  const key = line.subarray(0, eq).toString('latin1');
  return KEYS.has(key) ? [key, line.subarray(eq + 3)] : null;
}

const MODE_STRING = /^([-dlcbps])([-r][-w][-xsS][-r][-w][-xsS][-r][-w][-xtT])$/;

/** Kind and permission bits from 7-Zip's `Attributes` (`D drwxr-xr-x`, `A -rw-r--r--`, `A`, `D`). */
export function attributesKind(attrs: string): { kind: EntryKind; perm: number } {
  const words = attrs.trim().split(/\s+/);
  const mode = MODE_STRING.exec(words[words.length - 1] ?? '');
  if (mode) {
    const bits = mode[2];
    let perm = 0;
    for (let i = 0; i < 9; i++) if (bits[i] !== '-' && bits[i] !== 'S' && bits[i] !== 'T') perm |= 1 << (8 - i);
    const kind: EntryKind = { '-': 'file', d: 'dir', l: 'symlink', c: 'special', b: 'special', p: 'special', s: 'special' }[mode[1]] as EntryKind;
    return { kind, perm };
  }
  return (words[0] ?? '').includes('D') ? { kind: 'dir', perm: 0o755 } : { kind: 'file', perm: 0o644 };
}

/**
 * The largest dictionary or model a `Method` value asks for, in bytes (0 when none is stated):
 * `LZMA2:24` (2^24), `LZMA:26`, `LZMA2:1536m`, `PPMD:o6:mem24` / `mem192m`, RAR's `m3:22`, `v5:m3:128m`.
 */
export function methodMemory(method: string): number {
  let most = 0;
  for (const word of method.split(/\s+/)) {
    const [head, ...params] = word.split(':');
    // Only these coders' parameters are sizes (an order `o6`, RAR's method number `m3` are not).
    if (!/^(LZMA2?|PPMD|m\d|v\d)$/i.test(head ?? '')) continue;
    for (const p of params) {
      const m = /^(?:mem)?(\d+)([bkmg]?)$/i.exec(p);
      if (!m) continue;
      const n = Number(m[1]);
      const unit = m[2].toLowerCase();
      const bytes = unit === 'g' ? n * 2 ** 30 : unit === 'm' ? n * 2 ** 20 : unit === 'k' ? n * 1024 : unit === 'b' ? n : 2 ** n;
      if (Number.isFinite(bytes)) most = Math.max(most, bytes);
    }
  }
  return most;
}

function wrapEnd(end: SevenZipEnd, what: string): Error | null {
  if (end.heapRefused || end.code === 8) {
    return new ArchiveTooLargeError(`reading it needs more than the ${HEAP_MAX >> 20} MiB of memory 7-Zip may use in the Job`);
  }
  if (/wrong password|encrypted/i.test(end.stderr)) return new ArchiveEncryptedError('it is password-protected');
  if (end.code !== 0) {
    const why = end.stderr
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !/^(7-Zip|Scanning|Open archive|--|Path =|Type =|ERRORS?:?$|Sub items Errors|Archives with Errors)/.test(l))
      .slice(0, 3)
      .join('; ');
    return new ArchiveReadError(`7-Zip could not ${what} it${why ? `: ${why}` : ''}`);
  }
  return null;
}

const AES_CODER = Buffer.from([0x06, 0xf1, 0x07, 0x01]);
const K_ENCODED_HEADER = 0x17;

/**
 * True when a 7z archive's header is itself encrypted (`-mhe`): the start header points at an
 * encoded header whose coders (stored plainly, a few bytes) include 7-Zip's AES-256 coder. 7-Zip
 * fails to open such an archive without the password, and this says why.
 */
export function sevenZipHeaderEncrypted(fd: number): boolean {
  const start = Buffer.alloc(32);
  if (fs.readSync(fd, start, 0, 32, 0) !== 32 || start.readUInt32BE(0) !== 0x377abcaf) return false;
  const offset = Number(start.readBigUInt64LE(12));
  const size = Math.min(Number(start.readBigUInt64LE(20)), 64 << 10);
  if (!Number.isSafeInteger(offset) || size <= 0) return false;
  const header = Buffer.alloc(size);
  const n = fs.readSync(fd, header, 0, size, 32 + offset);
  return n > 0 && header[0] === K_ENCODED_HEADER && header.subarray(0, n).includes(AES_CODER);
}

/** One pass over a `.7z` or `.rar` archive: the listing, and for the extraction the data run beside it. */
export class SevenZipPass implements ArchivePass<SevenZipEntry> {
  readonly #list: SevenZipRun;
  readonly #lines: Lines;
  readonly #data: SevenZipRun | undefined;
  readonly #format: SevenZipFormat;
  readonly #fd: number;
  /** A RAR 4 archive's own headers, read beside the listing for what 7-Zip does not list (Unix modes). */
  #rar4: Rar4Headers | undefined;
  /** A RAR 5 archive's own file headers, read beside the listing for the names as stored (a NUL 7-Zip cuts off). */
  #rar5: Rar5Headers | undefined;
  #count = 0;
  #inEntries = false;
  #failed: Error | undefined;
  /** Unread bytes of the data run: what the last piece holds past what was handed out. */
  #pending: Buffer | undefined;
  /** Bytes of the current entry not yet handed out. */
  #owed = 0;
  #current: SevenZipEntry | undefined;
  #listedBytes = 0;
  #closed = false;

  readonly #maxEntries: number;

  private constructor(fd: number, format: SevenZipFormat, withData: boolean, maxEntries: number) {
    this.#maxEntries = maxEntries;
    this.#format = format;
    this.#fd = fd;
    const type = format === '7z' ? ['-t7z'] : [];
    this.#list = new SevenZipRun(fd, format, ['l', '-slt', ...COMMON, ...type]);
    this.#lines = new Lines(this.#list);
    this.#data = withData ? new SevenZipRun(fd, format, ['x', '-so', ...COMMON, ...type]) : undefined;
  }

  /** A pass over the archive `fd` holds (left open: the caller owns it); `withData` also runs the extraction. */
  static open(fd: number, format: SevenZipFormat, withData: boolean, maxEntries = MAX_ENTRIES): SevenZipPass {
    return new SevenZipPass(fd, format, withData, maxEntries);
  }

  #fail(e: Error): never {
    this.#failed ??= e;
    throw this.#failed;
  }

  /** Reads the archive's own record (before `----------`) and refuses what cannot be extracted whole. */
  async #readHead(): Promise<void> {
    let type = '';
    for (let line = await this.#lines.next(); ; line = await this.#lines.next()) {
      if (line === null) {
        if (this.#format === '7z' && sevenZipHeaderEncrypted(this.#fd)) this.#fail(new ArchiveEncryptedError('it is password-protected (its header is encrypted)'));
        const e = wrapEnd(this.#list.end(), 'open');
        this.#fail(e ?? new ArchiveReadError('7-Zip listed no entries'));
      }
      const s = line.toString('utf8');
      if (s === '----------') break;
      const kv = parseLine(line);
      if (!kv) continue; // 7-Zip's banner and the archive's own name
      const v = kv[1].toString('utf8');
      if (kv[0] === 'Type') type = v;
      if ((kv[0] === 'Multivolume' && v === '+') || (kv[0] === 'Volumes' && Number(v) > 1) || (kv[0] === 'Volume Index' && Number(v) > 0)) {
        this.#fail(new ArchiveReadError('it is one volume of a multi-volume archive, which is not extracted'));
      }
      if ((kv[0] === 'Encrypted' || kv[0] === 'Headers Encrypted' || kv[0] === 'Encrypted Headers') && v === '+') {
        this.#fail(new ArchiveEncryptedError('it is password-protected'));
      }
    }
    if (!TYPES[this.#format].has(type)) {
      this.#fail(new ArchiveReadError(`it is ${type ? `a ${type} archive` : 'no archive 7-Zip knows'}, not a .${this.#format}`));
    }
    if (type === 'Rar') this.#rar4 = new Rar4Headers(this.#fd);
    if (type === 'Rar5') this.#rar5 = new Rar5Headers(this.#fd);
  }

  /** One record, or null after the last one. */
  async #readRecord(): Promise<Map<string, Buffer> | null> {
    const rec = new Map<string, Buffer>();
    for (let line = await this.#lines.next(); ; line = await this.#lines.next()) {
      if (line === null) {
        const e = wrapEnd(this.#list.end(), 'list');
        if (e) this.#fail(e);
        break;
      }
      if (line.length === 0) {
        if (rec.size === 0) continue;
        break;
      }
      const kv = parseLine(line);
      if (!kv || rec.has(kv[0]) || (rec.size === 0 && kv[0] !== 'Path')) {
        // 7-Zip's closing report of errors ends the records; anything else is not a record's shape.
        if (rec.size === 0 && /^(Errors|Warnings|ERROR|WARNING)/i.test(line.toString('latin1'))) continue;
        this.#fail(new ArchiveReadError("7-Zip's listing of it has an unexpected shape"));
      }
      rec.set(kv[0], Buffer.from(kv[1]));
    }
    return rec.size === 0 ? null : rec;
  }

  async next(): Promise<SevenZipEntry | null> {
    if (this.#failed) throw this.#failed;
    try {
      if (!this.#inEntries) {
        await this.#readHead();
        this.#inEntries = true;
      }
      await this.#skipOwed();
      this.#current = undefined;
      const rec = await this.#readRecord();
      if (rec === null) {
        await this.#finishData();
        return null;
      }
      if (++this.#count > this.#maxEntries) {
        this.#fail(new ArchiveTooLargeError(`it lists more than ${this.#maxEntries} entries, the most whose header database 7-Zip can hold in the Job's memory`));
      }
      const text = (k: string) => rec.get(k)?.toString('utf8') ?? '';
      let rawName = rec.get('Path')!;
      const size = Number(text('Size') || '0');
      if (!Number.isSafeInteger(size) || size < 0 || !/^\d*$/.test(text('Size'))) this.#fail(new ArchiveReadError(`${rawName.toString('utf8')} declares an impossible size`));
      let { kind, perm } = attributesKind(text('Attributes'));
      if (this.#rar4) {
        const h = this.#rar4.next();
        if (!h || (text('Folder') !== '+' && h.unpackedSize !== size)) this.#fail(new ArchiveReadError("its headers and 7-Zip's listing of them disagree"));
        const stated = rar4Kind(h);
        if (stated) ({ kind, perm } = stated);
        if (h.nulName) rawName = h.nulName; // judged as stored, and refused
      }
      // A RAR 5 alternate stream is a service header of its file, not a file header of its own.
      if (this.#rar5 && text('Alternate Stream') !== '+') {
        const h = this.#rar5.next();
        const isDir = text('Folder') === '+';
        const linked = text('Symbolic Link') !== '' || text('Hard Link') !== '' || text('Copy Link') !== '';
        if (!h || h.isDir !== isDir || (!isDir && !linked && h.unpackedSize !== undefined && h.unpackedSize !== size)) {
          this.#fail(new ArchiveReadError("its headers and 7-Zip's listing of them disagree"));
        }
        if (h.name.includes(0)) rawName = h.name; // judged as stored, and refused
      }
      if (text('Folder') === '+') kind = 'dir';
      if (text('Symbolic Link') !== '') kind = 'symlink';
      else if (text('Hard Link') !== '' || text('Copy Link') !== '') kind = 'hardlink';
      else if (text('Alternate Stream') === '+') kind = 'special';
      const crcText = text('CRC');
      const crc32 = /^[0-9A-Fa-f]{8}$/.test(crcText) ? parseInt(crcText, 16) : undefined;
      const encrypted = text('Encrypted') === '+';
      const need = methodMemory(text('Method'));
      if (kind === 'file' && need > MAX_DICTIONARY) {
        this.#fail(
          new ArchiveTooLargeError(
            `${rawName.toString('utf8')} is compressed with a ${Math.round(need / (1 << 20))} MiB dictionary or model; at most ${MAX_DICTIONARY >> 20} MiB fits in the Job's memory`,
          ),
        );
      }
      // Everything but a folder has bytes in the data run (a link's are its target).
      const streamBytes = kind === 'dir' ? 0 : size;
      this.#listedBytes += streamBytes;
      const e: SevenZipEntry = {
        rawName,
        versionMadeBy: 3 << 8,
        externalAttributes: 0,
        typed: { kind, perm },
        compressedSize: size,
        localHeaderOffset: -1,
        uncompressedSize: kind === 'file' ? size : 0,
        crc32: kind === 'file' ? crc32 : undefined,
        canDecode: !encrypted,
        streamBytes,
      };
      this.#current = e;
      this.#owed = streamBytes;
      return e;
    } catch (err) {
      if (err instanceof ArchiveReadError || err instanceof ArchiveTooLargeError) this.#fail(err);
      this.#fail(new ArchiveReadError(err instanceof Error ? err.message : String(err), { cause: err }));
    }
  }

  /** The next piece of the data run, at most `max` bytes, or null when it has ended. */
  async #piece(max: number): Promise<Buffer | null> {
    if (!this.#data) throw new ArchiveReadError('this pass reads no data');
    let p = this.#pending;
    this.#pending = undefined;
    if (!p || p.length === 0) p = (await this.#data.read()) ?? undefined;
    if (!p) return null;
    if (p.length > max) {
      this.#pending = p.subarray(max);
      p = p.subarray(0, max);
    }
    return p;
  }

  async #skipOwed(): Promise<void> {
    if (!this.#data) return;
    while (this.#owed > 0) {
      const p = await this.#piece(this.#owed);
      if (!p) return; // the data ended early: the entry that wanted it fails, or the end check does
      this.#owed -= p.length;
    }
  }

  /** At the end: the data run gave exactly the listed bytes and ended cleanly. */
  async #finishData(): Promise<void> {
    if (!this.#data) return;
    const extra = await this.#piece(1);
    if (extra) this.#fail(new ArchiveReadError('7-Zip extracted more data than the archive lists'));
    const e = wrapEnd(this.#data.end(), 'extract');
    if (e) this.#fail(e);
  }

  readSmall(): Buffer | null {
    return null;
  }

  async openData(e: SevenZipEntry): Promise<AsyncIterable<Buffer>> {
    if (e !== this.#current) throw new ArchiveReadError("an entry's data was asked for after the next entry was read");
    return {
      [Symbol.asyncIterator]: async function* (this: SevenZipPass) {
        while (this.#owed > 0) {
          const p = await this.#piece(this.#owed);
          if (!p) {
            // 7-Zip stopped short: its own reason (a damaged block, a failed CRC) says why.
            const end = this.#data!.end();
            throw wrapEnd(end, 'extract') ?? new ArchiveReadError('the data ended early');
          }
          this.#owed -= p.length;
          yield p;
        }
      }.bind(this),
    };
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#list.stop();
    this.#data?.stop();
  }
}
