/**
 * The host and attributes of each file header of a RAR 4 archive, read from the headers themselves:
 * 7-Zip lists a RAR 4 entry made on Unix without its mode, so without this a symbolic link, a
 * device or a FIFO would look like a regular file. Blocks are walked front to back by their sizes
 * (one header read at a time, the data skipped), in the order 7-Zip lists the files.
 *
 * The name is read too, for the one thing 7-Zip's listing cannot show: a NUL inside it. 7-Zip cuts
 * a name at its first NUL (`a\0b.txt` is listed, and would be extracted, as `a`), so a name that
 * holds one is handed to the judge as stored, to be refused. A name flagged Unicode (0x200) is
 * UTF-8 when it holds no NUL; otherwise a NUL separates its OEM form from its Unicode form in
 * RAR's own encoding, which is decoded here as 7-Zip decodes it, to find a NUL in that.
 *
 * RAR 4 block: CRC u16, type u8, flags u16, size u16, then (flag 0x8000, and always for a file
 * header) a u32 of data that follows the header. File header (0x74): packed size u32, unpacked size
 * u32, host u8, CRC u32, time u32, version u8, method u8, name size u16, attributes u32, and with
 * flag 0x100 the high halves of both sizes. End of archive: type 0x7b.
 *
 * @module
 */
import fs from 'node:fs';
import { ArchiveReadError } from './zip-reader.ts';

const MARKER = Buffer.from('Rar!\x1a\x07\x00', 'latin1');
const FILE_HEAD = 0x74;
const END_HEAD = 0x7b;
const LONG_BLOCK = 0x8000;
const LARGE = 0x100;
const UNICODE = 0x200;
/** 7-Zip decodes at most this many characters of a Unicode name. */
const UNICODE_CHARS_MAX = 0x400;

export interface Rar4Header {
  host: number;
  attributes: number;
  unpackedSize: number;
  /** The name as the archive stores it, when it holds a NUL that 7-Zip's listing cuts off (UTF-8). */
  nulName?: Buffer;
}

/**
 * RAR 4's Unicode name encoding (unrar's EncodeFileName::Decode, as 7-Zip has it): after the NUL,
 * a high byte, then flag bytes whose 2-bit ops say how each character is made (one byte; one byte
 * with the high byte; two bytes; or a run copied from the OEM name, optionally shifted). Returns the
 * UTF-16 code units, at most `max`.
 */
export function decodeRar4Unicode(name: Buffer, enc: Buffer, max: number): number[] {
  const out: number[] = [];
  let at = 0;
  const high = at < enc.length ? enc[at++]! : 0;
  let flags = 0;
  let bits = 0;
  while (at < enc.length && out.length < max) {
    if (bits === 0) {
      flags = enc[at++]!;
      bits = 8;
    }
    const op = flags >> 6;
    if (op === 0) {
      if (at >= enc.length) break;
      out.push(enc[at++]!);
    } else if (op === 1) {
      if (at >= enc.length) break;
      out.push(enc[at++]! + (high << 8));
    } else if (op === 2) {
      if (at + 1 >= enc.length) break;
      out.push(enc[at]! + (enc[at + 1]! << 8));
      at += 2;
    } else {
      if (at >= enc.length) break;
      let len = enc[at++]!;
      if (len & 0x80) {
        if (at >= enc.length) break;
        const correction = enc[at++]!;
        for (len = (len & 0x7f) + 2; len > 0 && out.length < max && out.length < name.length; len--) out.push(((name[out.length]! + correction) & 0xff) + (high << 8));
      } else {
        for (len += 2; len > 0 && out.length < max && out.length < name.length; len--) out.push(name[out.length]!);
      }
    }
    flags = (flags << 2) & 0xff;
    bits -= 2;
  }
  return out;
}

/** The stored name when a reader cutting at NUL would shorten it, as UTF-8; else undefined. */
export function rar4NulName(raw: Buffer, flags: number): Buffer | undefined {
  const nul = raw.indexOf(0);
  if (nul < 0) return undefined;
  if (!(flags & UNICODE)) return raw;
  const units = decodeRar4Unicode(raw, raw.subarray(nul + 1), Math.min(raw.length, UNICODE_CHARS_MAX));
  if (!units.includes(0)) return undefined;
  return Buffer.from(String.fromCharCode(...units), 'utf8');
}

export class Rar4Headers {
  readonly #fd: number;
  readonly #size: number;
  #at: number;
  readonly #buf = Buffer.alloc(40);

  constructor(fd: number) {
    this.#fd = fd;
    this.#size = fs.fstatSync(fd).size;
    const head = Buffer.alloc(MARKER.length);
    if (fs.readSync(fd, head, 0, head.length, 0) !== head.length || !head.equals(MARKER)) {
      // A self-extracting RAR 4 (code before the marker) is not taken: its headers cannot be judged here.
      throw new ArchiveReadError('the RAR 4 archive does not start with its marker');
    }
    this.#at = MARKER.length;
  }

  /** The next file header, or null at the end of the archive. */
  next(): Rar4Header | null {
    for (;;) {
      if (this.#at + 7 > this.#size) return null;
      const n = fs.readSync(this.#fd, this.#buf, 0, this.#buf.length, this.#at);
      if (n < 7) return null;
      const type = this.#buf[2];
      const flags = this.#buf.readUInt16LE(3);
      const headSize = this.#buf.readUInt16LE(5);
      if (type === END_HEAD) return null;
      if (headSize < 7) throw new ArchiveReadError('a RAR 4 header declares an impossible size');
      let add = 0;
      if (flags & LONG_BLOCK || type === FILE_HEAD) {
        if (n < 11) throw new ArchiveReadError('a RAR 4 header is cut short');
        add = this.#buf.readUInt32LE(7);
      }
      if (type === FILE_HEAD) {
        if (n < 32) throw new ArchiveReadError('a RAR 4 file header is cut short');
        let unpacked = this.#buf.readUInt32LE(11);
        if (flags & LARGE) {
          if (n < 40) throw new ArchiveReadError('a RAR 4 file header is cut short');
          add += this.#buf.readUInt32LE(32) * 0x1_0000_0000;
          unpacked += this.#buf.readUInt32LE(36) * 0x1_0000_0000;
        }
        const nameAt = flags & LARGE ? 40 : 32;
        const nameSize = this.#buf.readUInt16LE(26);
        if (nameAt + nameSize > headSize) throw new ArchiveReadError("a RAR 4 file header's name runs past the header");
        const raw = Buffer.alloc(nameSize);
        if (fs.readSync(this.#fd, raw, 0, nameSize, this.#at + nameAt) !== nameSize) throw new ArchiveReadError('a RAR 4 file header is cut short');
        const nulName = rar4NulName(raw, flags);
        const h: Rar4Header = { host: this.#buf[15]!, attributes: this.#buf.readUInt32LE(28), unpackedSize: unpacked, ...(nulName ? { nulName } : {}) };
        this.#at += headSize + add;
        return h;
      }
      this.#at += headSize + add;
    }
  }
}

const S_IFMT = 0o170000;
const UNIX = 3;
const DOS_HOSTS = new Set([0, 2]); // MS-DOS, Win32

/** What a RAR 4 header's host and attributes say an entry is, or undefined when they say nothing (another host). */
export function rar4Kind(h: Rar4Header): { kind: 'file' | 'dir' | 'symlink' | 'special'; perm: number } | undefined {
  if (h.host === UNIX) {
    const fmt = h.attributes & S_IFMT;
    const perm = h.attributes & 0o777;
    if (fmt === 0o040000) return { kind: 'dir', perm };
    if (fmt === 0o120000) return { kind: 'symlink', perm };
    if (fmt !== 0 && fmt !== 0o100000) return { kind: 'special', perm };
    return { kind: 'file', perm };
  }
  if (DOS_HOSTS.has(h.host)) return h.attributes & 0x10 ? { kind: 'dir', perm: 0o755 } : { kind: 'file', perm: 0o644 };
  return undefined;
}
