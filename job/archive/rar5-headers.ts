/**
 * The file headers of a RAR 5 archive, read from the archive itself beside 7-Zip's listing, for
 * what the listing cannot show: a NUL inside a name. 7-Zip cuts a name at its first NUL
 * (`a\0b.txt` is listed, and would be extracted, as `a`), so the pass hands a name that holds one
 * to the judge as stored, to be refused (sevenzip-pass.ts). Headers are walked front to back by
 * their sizes, one read at a time and the data skipped, in the order 7-Zip lists the files.
 *
 * RAR 5 (RARLAB's description of the format): the signature `Rar!\x1a\x07\x01\x00`, then headers:
 * a CRC-32, the header's size as a vint (7 bits a byte, low first), then its type, flags,
 * optional extra-area and data sizes (vints), its fields, and the data area after it. A file header
 * (type 2): file flags, unpacked size, attributes, a modification time (flag 0x02), a CRC-32 (flag
 * 0x04), compression, host OS, and the name (its length, then UTF-8 bytes). An encryption header
 * (type 4) hides every header after it; the end of the archive is type 5.
 *
 * @module
 */
import fs from 'node:fs';
import { ArchiveReadError } from './zip-reader.ts';

const SIGNATURE = Buffer.from('Rar!\x1a\x07\x01\x00', 'latin1');
const FILE_HEAD = 2;
const ENCRYPTION_HEAD = 4;
const END_HEAD = 5;
/** RAR 5 headers are at most 2 MiB (the format's own bound), so one is read whole. */
const HEADER_MAX = 2 << 20;
/** A vint has at most 10 bytes; the size and the CRC before it fit in this much. */
const LEAD = 4 + 10;

export interface Rar5File {
  /** The name as stored (UTF-8 by the format). */
  name: Buffer;
  isDir: boolean;
  /** Undefined when the header says the size is unknown. */
  unpackedSize: number | undefined;
}

const damaged = (why: string) => new ArchiveReadError(`a RAR 5 header ${why}`);

/** A cursor over one header's bytes, reading vints and fixed fields; past the end is damage. */
class Fields {
  readonly #b: Buffer;
  #at = 0;
  constructor(b: Buffer) {
    this.#b = b;
  }
  get at(): number {
    return this.#at;
  }
  vint(): number {
    let n = 0;
    for (let shift = 0; shift < 70; shift += 7) {
      if (this.#at >= this.#b.length) throw damaged('is cut short');
      const byte = this.#b[this.#at++]!;
      n += (byte & 0x7f) * 2 ** shift;
      if (!(byte & 0x80)) {
        if (!Number.isSafeInteger(n)) throw damaged('states an impossible size');
        return n;
      }
    }
    throw damaged('has a number longer than ten bytes');
  }
  skip(n: number): void {
    if (this.#at + n > this.#b.length) throw damaged('is cut short');
    this.#at += n;
  }
  bytes(n: number): Buffer {
    this.skip(n);
    return this.#b.subarray(this.#at - n, this.#at);
  }
}

export class Rar5Headers {
  readonly #fd: number;
  readonly #size: number;
  #at: number;
  #ended = false;

  constructor(fd: number) {
    this.#fd = fd;
    this.#size = fs.fstatSync(fd).size;
    const head = Buffer.alloc(SIGNATURE.length);
    if (fs.readSync(fd, head, 0, head.length, 0) !== head.length || !head.equals(SIGNATURE)) {
      // A self-extracting RAR 5 (code before the signature) is not taken: its headers cannot be judged here.
      throw new ArchiveReadError('the RAR 5 archive does not start with its signature');
    }
    this.#at = SIGNATURE.length;
  }

  /** The next file header, or null at the end of the archive (or where encrypted headers begin). */
  next(): Rar5File | null {
    while (!this.#ended && this.#at < this.#size) {
      const lead = Buffer.alloc(Math.min(LEAD, this.#size - this.#at));
      fs.readSync(this.#fd, lead, 0, lead.length, this.#at);
      const sized = new Fields(lead.subarray(4));
      const headerSize = sized.vint();
      if (headerSize < 2 || headerSize > HEADER_MAX) throw damaged('declares an impossible size');
      const start = this.#at + 4 + sized.at;
      const header = Buffer.alloc(headerSize);
      if (fs.readSync(this.#fd, header, 0, headerSize, start) !== headerSize) throw damaged('is cut short');
      const f = new Fields(header);
      const type = f.vint();
      const flags = f.vint();
      if (flags & 0x01) f.vint(); // the extra area's size: the area is at the header's end
      const dataSize = flags & 0x02 ? f.vint() : 0;
      this.#at = start + headerSize + dataSize;
      if (!Number.isSafeInteger(this.#at)) throw damaged('declares an impossible size');
      if (type === END_HEAD || type === ENCRYPTION_HEAD) this.#ended = true;
      if (type !== FILE_HEAD) continue;
      const fileFlags = f.vint();
      const unpackedSize = f.vint();
      f.vint(); // attributes
      if (fileFlags & 0x02) f.skip(4); // modification time
      if (fileFlags & 0x04) f.skip(4); // the data's CRC-32
      f.vint(); // compression
      f.vint(); // host OS
      const name = Buffer.from(f.bytes(f.vint()));
      return { name, isDir: (fileFlags & 0x01) !== 0, unpackedSize: fileFlags & 0x08 ? undefined : unpackedSize };
    }
    return null;
  }
}
