/**
 * Test-only: a minimal 7z writer (nothing in main.ts imports it), written from the 7z format
 * description, so a test can build archives no 7z tool would write: hostile names, Unix modes for
 * links, devices and FIFOs, lying sizes, damaged CRCs. Each file's data is its own folder with the
 * Copy coder (stored); the header is plain (not itself compressed).
 *
 * Layout: a 32-byte signature header (magic, version, CRC of the next 20 bytes, then the offset,
 * size and CRC of the header), the packed streams, then the header: streams info (pack sizes,
 * folders, unpack sizes, CRCs) and files info (empty-stream and empty-file bit vectors, UTF-16
 * names, Windows attributes with the Unix extension 0x8000 and the mode in the high 16 bits).
 *
 * @module
 */
import zlib from 'node:zlib';
import type { ForgedTar } from './forge.test-kit.ts';

const K = {
  End: 0x00,
  Header: 0x01,
  MainStreamsInfo: 0x04,
  FilesInfo: 0x05,
  PackInfo: 0x06,
  UnPackInfo: 0x07,
  SubStreamsInfo: 0x08,
  Size: 0x09,
  CRC: 0x0a,
  Folder: 0x0b,
  CodersUnPackSize: 0x0c,
  EmptyStream: 0x0e,
  EmptyFile: 0x0f,
  Name: 0x11,
  WinAttributes: 0x15,
};
const FILE_ATTRIBUTE_DIRECTORY = 0x10;
const FILE_ATTRIBUTE_UNIX_EXTENSION = 0x8000;
const S_IFMT = 0o170000;

/** 7z's variable-length NUMBER: the first byte's leading one bits count the little-endian bytes that follow. */
export function number7z(value: number): Buffer {
  const v = BigInt(value);
  for (let extra = 0; extra < 8; extra++) {
    if (v < 1n << BigInt(8 * extra + 7 - extra)) {
      const out = Buffer.alloc(1 + extra);
      out[0] = ((0xff << (8 - extra)) & 0xff) | Number(v >> BigInt(8 * extra));
      for (let i = 0; i < extra; i++) out[1 + i] = Number((v >> BigInt(8 * i)) & 0xffn);
      return out;
    }
  }
  const out = Buffer.alloc(9);
  out[0] = 0xff;
  out.writeBigUInt64LE(v, 1);
  return out;
}

/** A bit vector, most significant bit first. */
function bits(flags: boolean[]): Buffer {
  const out = Buffer.alloc(Math.ceil(flags.length / 8));
  flags.forEach((f, i) => {
    if (f) out[i >> 3] |= 0x80 >> (i & 7);
  });
  return out;
}

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n >>> 0);
  return b;
}

/** The mode a forged entry stands for, from its tar typeflag and mode. */
function unixMode(e: ForgedTar): number {
  const type = e.type ?? '0';
  const perm = e.mode !== undefined ? e.mode & 0o7777 : type === '5' ? 0o755 : type === '2' ? 0o777 : 0o644;
  if (e.mode !== undefined && (e.mode & S_IFMT) !== 0) return e.mode;
  const fmt = { '0': 0o100000, '5': 0o040000, '2': 0o120000, '3': 0o020000, '4': 0o060000, '6': 0o010000 }[type] ?? 0o100000;
  return fmt | perm;
}

/**
 * Builds a 7z archive of `entries` (a name ending in `/` or type '5' is a folder; a symlink's data is
 * its `linkname`, as 7-Zip stores one). `declaredSize` lies in the unpack size; `badChecksum` damages
 * the data's CRC. A hard link (type '1') has no form in 7z and is written as the file it names.
 * `opts.coder` replaces the Copy coder's record (flags, id, properties) to state another method.
 */
export function forge7z(entries: ForgedTar[], opts: { coder?: Buffer } = {}): Buffer {
  const names: Buffer[] = [];
  const attrs: number[] = [];
  const emptyStream: boolean[] = [];
  const emptyFile: boolean[] = [];
  const packs: Buffer[] = [];
  const unpackSizes: number[] = [];
  const crcs: number[] = [];
  for (const e of entries) {
    const raw = Buffer.isBuffer(e.name) ? e.name.toString('utf8') : (e.paxPath ?? e.name);
    const isDir = (e.type ?? '0') === '5' || raw.endsWith('/');
    const name = isDir && raw.endsWith('/') && raw.length > 1 ? raw.slice(0, -1) : raw;
    const mode = isDir ? 0o040000 | ((e.mode ?? 0o755) & 0o7777) : unixMode(e);
    const data = (e.type ?? '0') === '2' ? Buffer.from(e.linkname ?? '') : e.data === undefined ? Buffer.alloc(0) : Buffer.from(e.data);
    names.push(Buffer.concat([Buffer.from(name, 'utf16le'), Buffer.alloc(2)]));
    attrs.push(((isDir ? FILE_ATTRIBUTE_DIRECTORY : 0) | FILE_ATTRIBUTE_UNIX_EXTENSION | (mode << 16)) >>> 0);
    const hasStream = !isDir && data.length > 0;
    emptyStream.push(!hasStream);
    if (!hasStream) emptyFile.push(!isDir);
    if (hasStream) {
      packs.push(data);
      unpackSizes.push(e.declaredSize ?? data.length);
      crcs.push(e.badChecksum ? zlib.crc32(data) ^ 1 : zlib.crc32(data));
    }
  }

  const h: Buffer[] = [Buffer.from([K.Header])];
  if (packs.length > 0) {
    h.push(Buffer.from([K.MainStreamsInfo, K.PackInfo]), number7z(0), number7z(packs.length), Buffer.from([K.Size]));
    for (const p of packs) h.push(number7z(p.length));
    h.push(Buffer.from([K.End, K.UnPackInfo, K.Folder]), number7z(packs.length), Buffer.from([0]));
    // One coder: id size 1, simple (one in, one out stream), no properties; id 0x00 is Copy.
    for (let i = 0; i < packs.length; i++) h.push(number7z(1), opts.coder ?? Buffer.from([0x01, 0x00]));
    h.push(Buffer.from([K.CodersUnPackSize]));
    for (const s of unpackSizes) h.push(number7z(s));
    h.push(Buffer.from([K.End, K.SubStreamsInfo, K.CRC, 1]));
    for (const c of crcs) h.push(u32(c));
    h.push(Buffer.from([K.End, K.End]));
  }
  h.push(Buffer.from([K.FilesInfo]), number7z(entries.length));
  const prop = (id: number, body: Buffer) => h.push(Buffer.from([id]), number7z(body.length), body);
  if (emptyStream.some(Boolean)) {
    prop(K.EmptyStream, bits(emptyStream));
    prop(K.EmptyFile, bits(emptyFile));
  }
  prop(K.Name, Buffer.concat([Buffer.from([0]), ...names]));
  prop(K.WinAttributes, Buffer.concat([Buffer.from([1, 0]), ...attrs.map(u32)]));
  h.push(Buffer.from([K.End, K.End]));
  const header = Buffer.concat(h);

  const packed = Buffer.concat(packs);
  const start = Buffer.alloc(20);
  start.writeBigUInt64LE(BigInt(packed.length), 0);
  start.writeBigUInt64LE(BigInt(header.length), 8);
  start.writeUInt32LE(zlib.crc32(header), 16);
  const sig = Buffer.concat([Buffer.from([0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c, 0, 4]), u32(zlib.crc32(start)), start]);
  return Buffer.concat([sig, packed, header]);
}
