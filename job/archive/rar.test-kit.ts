/**
 * Test-only: RAR archives of stored entries (nothing in main.ts imports it), written from RARLAB's
 * published descriptions of the RAR 5.0 and RAR 2.9/4.x formats. No free tool writes RAR, so this
 * is how the tests (and the curl walk) get `.rar` files: hostile names, folders, Unix host modes
 * (links, devices, FIFOs), RAR 5 file-system redirection records (symbolic and hard links), lying
 * sizes and damaged CRCs.
 *
 * RAR 5: signature `Rar!\x1a\x07\x01\x00`, then headers, each a CRC-32 of what follows it, the
 * header's size, type and flags as vints (7 bits a byte, low first), its fields, an optional extra
 * area of records, then its data. Main header (type 1), one file header (type 2) per entry with the
 * data stored (method 0), end of archive (type 5).
 *
 * RAR 4: marker `Rar!\x1a\x07\x00`, then blocks of little-endian fixed fields headed by the low 16
 * bits of the CRC-32 of the block from its type on: archive header (0x73), file headers (0x74,
 * method 0x30 "store", host 3 Unix, a folder marked by dictionary bits 111), end of archive (0x7b).
 *
 * @module
 */
import zlib from 'node:zlib';
import type { ForgedTar } from './forge.test-kit.ts';

const S_IFMT = 0o170000;

function vint(n: number): Buffer {
  const out: number[] = [];
  let v = BigInt(n);
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) b |= 0x80;
    out.push(b);
  } while (v > 0n);
  return Buffer.from(out);
}

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n >>> 0);
  return b;
}

function modeOf(e: ForgedTar, isDir: boolean): number {
  const type = e.type ?? '0';
  if (e.mode !== undefined && (e.mode & S_IFMT) !== 0) return e.mode;
  const perm = e.mode !== undefined ? e.mode & 0o7777 : isDir ? 0o755 : type === '2' ? 0o777 : 0o644;
  const fmt = isDir ? 0o040000 : ({ '0': 0o100000, '1': 0o100000, '2': 0o120000, '3': 0o020000, '4': 0o060000, '6': 0o010000 }[type] ?? 0o100000);
  return fmt | perm;
}

interface Item {
  name: Buffer;
  isDir: boolean;
  mode: number;
  data: Buffer;
  size: number;
  crc: number;
  link?: { type: number; target: string };
}

function items(entries: ForgedTar[], version: 4 | 5): Item[] {
  return entries.map((e) => {
    const raw = Buffer.isBuffer(e.name) ? e.name : Buffer.from(e.paxPath ?? e.name, 'utf8');
    const isDir = (e.type ?? '0') === '5' || raw[raw.length - 1] === 0x2f;
    const name = isDir && raw[raw.length - 1] === 0x2f && raw.length > 1 ? raw.subarray(0, -1) : raw;
    const type = e.type ?? '0';
    // RAR 5 says what a link is in a redirection record; RAR 4 stores a symlink's target as its data.
    const link = version === 5 && (type === '2' || type === '1') ? { type: type === '2' ? 1 : 4, target: e.linkname ?? '' } : undefined;
    const data = link || isDir ? Buffer.alloc(0) : type === '2' ? Buffer.from(e.linkname ?? '') : e.data === undefined ? Buffer.alloc(0) : Buffer.from(e.data);
    const crc = zlib.crc32(data) ^ (e.badChecksum ? 1 : 0);
    return { name, isDir, mode: modeOf(e, isDir), data, size: e.declaredSize ?? data.length, crc, link };
  });
}

/** One RAR 5 header: CRC-32, size, then `body` (type, flags, fields, extra area). */
function rar5Header(body: Buffer): Buffer {
  const sized = Buffer.concat([vint(body.length), body]);
  return Buffer.concat([u32(zlib.crc32(sized)), sized]);
}

export interface RarOptions {
  /** Marks the archive as the first volume of a multi-volume set. */
  volume?: boolean;
  /** Marks every file as encrypted (RAR 4's password flag; the data stays as it is). */
  encrypted?: boolean;
}

function rar5(list: Item[], opts: RarOptions): Buffer {
  const parts: Buffer[] = [Buffer.from('Rar!\x1a\x07\x01\x00', 'latin1')];
  // Main header: type 1, no header flags, archive flags (0x01: a volume).
  parts.push(rar5Header(Buffer.concat([vint(1), vint(0), vint(opts.volume ? 0x01 : 0)])));
  for (const it of list) {
    let extra = Buffer.alloc(0);
    if (it.link) {
      const target = Buffer.from(it.link.target, 'utf8');
      const rec = Buffer.concat([vint(5), vint(it.link.type), vint(0), vint(target.length), target]);
      extra = Buffer.concat([vint(rec.length), rec]);
    }
    const hasData = it.data.length > 0;
    const headFlags = (extra.length > 0 ? 0x01 : 0) | (hasData ? 0x02 : 0);
    const fileFlags = (it.isDir ? 0x01 : 0) | (it.isDir ? 0 : 0x04);
    const body = Buffer.concat([
      vint(2),
      vint(headFlags),
      ...(extra.length > 0 ? [vint(extra.length)] : []),
      ...(hasData ? [vint(it.data.length)] : []),
      vint(fileFlags),
      vint(it.isDir ? 0 : it.size),
      vint(it.mode),
      ...(it.isDir ? [] : [u32(it.crc)]),
      vint(0), // compression: version 0, method 0 (store), smallest dictionary
      vint(1), // host OS: Unix
      vint(it.name.length),
      it.name,
      extra,
    ]);
    parts.push(rar5Header(body), it.data);
  }
  parts.push(rar5Header(Buffer.concat([vint(5), vint(0), vint(0)])));
  return Buffer.concat(parts);
}

/** One RAR 4 block: the CRC-16 (CRC-32's low half) of everything from the type on, then the block. */
function rar4Block(fromType: Buffer): Buffer {
  const crc = Buffer.alloc(2);
  crc.writeUInt16LE(zlib.crc32(fromType) & 0xffff);
  return Buffer.concat([crc, fromType]);
}

const DOS_TIME = ((2024 - 1980) << 25) | (1 << 21) | (1 << 16);

function rar4(list: Item[], opts: RarOptions): Buffer {
  const parts: Buffer[] = [Buffer.from('Rar!\x1a\x07\x00', 'latin1')];
  const main = Buffer.alloc(11);
  main[0] = 0x73;
  main.writeUInt16LE(opts.volume ? 0x0101 : 0, 1); // 0x01 a volume, 0x100 the first one
  main.writeUInt16LE(13, 3);
  parts.push(rar4Block(main));
  for (const it of list) {
    const ascii = it.name.every((b) => b < 0x80);
    // A name flagged Unicode with no NUL in it is UTF-8.
    const flags = 0x8000 | (it.isDir ? 0xe0 : 0) | (ascii ? 0 : 0x200) | (opts.encrypted && !it.isDir ? 0x04 : 0);
    const h = Buffer.alloc(30);
    h[0] = 0x74;
    h.writeUInt16LE(flags, 1);
    h.writeUInt16LE(32 + it.name.length, 3);
    h.writeUInt32LE(it.data.length, 5);
    h.writeUInt32LE(it.isDir ? 0 : it.size, 9);
    h[13] = 3; // host OS: Unix
    h.writeUInt32LE(it.isDir ? 0 : it.crc >>> 0, 14);
    h.writeUInt32LE(DOS_TIME, 18);
    h[22] = 20; // version needed to extract: 2.0
    h[23] = 0x30; // method: store
    h.writeUInt16LE(it.name.length, 24);
    h.writeUInt32LE(it.mode >>> 0, 26);
    parts.push(rar4Block(Buffer.concat([h, it.name])), it.data);
  }
  const end = Buffer.alloc(5);
  end[0] = 0x7b;
  end.writeUInt16LE(0x4000, 1);
  end.writeUInt16LE(7, 3);
  parts.push(rar4Block(end));
  return Buffer.concat(parts);
}

/** Builds a RAR archive (format 4 or 5) of stored entries. `declaredSize` lies in the unpacked size; `badChecksum` damages the data's CRC. */
export function forgeRar(entries: ForgedTar[], version: 4 | 5, opts: RarOptions = {}): Buffer {
  const list = items(entries, version);
  return version === 5 ? rar5(list, opts) : rar4(list, opts);
}

/** The two versions as the hostile suite's forgers: `(entries) => Buffer`. */
export const forgeRar5 = (entries: ForgedTar[]): Buffer => forgeRar(entries, 5);
export const forgeRar4 = (entries: ForgedTar[]): Buffer => forgeRar(entries, 4);
