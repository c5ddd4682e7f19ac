/**
 * Test-only tools for the archive tests (nothing in main.ts imports this): a zip *forger* that
 * writes raw local headers and central directory records, so a test can build archives no library
 * writer would (lying sizes, bad CRCs, overlapping entries, hostile names, symlink and device
 * modes); and a digest of a whole tree, to prove a refused extraction changed nothing at all.
 *
 * @module
 */

import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { LEDGER_DIR } from '../runtime/withheld.ts';

export interface Forged {
  /** Raw bytes of the name (a string is written as UTF-8). */
  name: string | Buffer;
  data?: Buffer | string;
  /** 8 deflates the data; 0 stores it (default 8 when there is data). */
  method?: 0 | 8;
  /** Unix mode with type bits (written with host Unix); default 0o100644, or 0o040755 for names ending in '/'. */
  mode?: number;
  /** Use MS-DOS attributes (host FAT) instead of a Unix mode. */
  dosAttrs?: number;
  /** Sets the UTF-8 flag (bit 11). */
  utf8Flag?: boolean;
  /** Lies: the declared uncompressed size, CRC-32 and compressed size. */
  declaredSize?: number;
  crc?: number;
  /** Raw compressed bytes to store instead of compressing `data`. */
  raw?: Buffer;
  /** Points this central record at entry N's local header (overlapping entries). */
  sameDataAs?: number;
  /** General purpose flags to add (bit 0: encrypted). */
  extraFlags?: number;
}

export const S_IFLNK = 0o120000;
export const S_IFIFO = 0o010000;
export const S_IFCHR = 0o020000;

/** Builds a zip from forged entries. Only what the tests need: no zip64, no extra fields. */
export function forgeZip(entries: Forged[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  const offsets: number[] = [];
  let offset = 0;
  entries.forEach((e, i) => {
    const name = Buffer.isBuffer(e.name) ? e.name : Buffer.from(e.name, 'utf8');
    const data = e.data === undefined ? Buffer.alloc(0) : Buffer.isBuffer(e.data) ? e.data : Buffer.from(e.data);
    const method = e.method ?? (data.length > 0 || e.raw ? 8 : 0);
    const body = e.raw ?? (method === 8 ? zlib.deflateRawSync(data) : data);
    const crc = e.crc ?? zlib.crc32(data);
    const size = e.declaredSize ?? data.length;
    const flags = (e.utf8Flag ? 0x800 : 0) | (e.extraFlags ?? 0);
    const isDirName = name[name.length - 1] === 0x2f;
    let madeBy: number;
    let external: number;
    if (e.dosAttrs !== undefined) {
      madeBy = (0 << 8) | 20;
      external = e.dosAttrs;
    } else {
      madeBy = (3 << 8) | 20;
      external = ((e.mode ?? (isDirName ? 0o040755 : 0o100644)) << 16) >>> 0;
    }
    let localOffset: number;
    if (e.sameDataAs !== undefined) {
      localOffset = offsets[e.sameDataAs];
    } else {
      const h = Buffer.alloc(30);
      h.writeUInt32LE(0x04034b50, 0);
      h.writeUInt16LE(20, 4);
      h.writeUInt16LE(flags, 6);
      h.writeUInt16LE(method, 8);
      h.writeUInt16LE(0, 10);
      h.writeUInt16LE(0x21, 12);
      h.writeUInt32LE(crc >>> 0, 14);
      h.writeUInt32LE(body.length, 18);
      h.writeUInt32LE(size, 22);
      h.writeUInt16LE(name.length, 26);
      h.writeUInt16LE(0, 28);
      localOffset = offset;
      locals.push(h, name, body);
      offset += 30 + name.length + body.length;
    }
    offsets[i] = localOffset;
    const c = Buffer.alloc(46);
    c.writeUInt32LE(0x02014b50, 0);
    c.writeUInt16LE(madeBy, 4);
    c.writeUInt16LE(20, 6);
    c.writeUInt16LE(flags, 8);
    c.writeUInt16LE(method, 10);
    c.writeUInt16LE(0, 12);
    c.writeUInt16LE(0x21, 14);
    c.writeUInt32LE(crc >>> 0, 16);
    const src = e.sameDataAs !== undefined ? entries[e.sameDataAs] : e;
    const srcData = src.data === undefined ? Buffer.alloc(0) : Buffer.isBuffer(src.data) ? src.data : Buffer.from(src.data);
    const srcBody = src.raw ?? ((src.method ?? (srcData.length > 0 || src.raw ? 8 : 0)) === 8 ? zlib.deflateRawSync(srcData) : srcData);
    c.writeUInt32LE(e.sameDataAs !== undefined ? srcBody.length : body.length, 20);
    c.writeUInt32LE(size, 24);
    c.writeUInt16LE(name.length, 28);
    c.writeUInt32LE(external, 38);
    c.writeUInt32LE(localOffset, 42);
    centrals.push(c, name);
  });
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}

/**
 * A digest of everything under `dir`: each entry's relative path, type, permission bits, and its
 * bytes (files) or target (links), in sorted order. Equal digests mean byte-for-byte equal trees.
 */
/** The withheld-file ledger a read-write Job keeps (withheld.ts) is the editor's, not the world's: never in a digest. */
const isLedger = (rel: string) => rel === LEDGER_DIR || rel.endsWith(`/${LEDGER_DIR}`);

export function treeDigest(dir: string, skip: (rel: string) => boolean = () => false): string {
  const h = createHash('sha256');
  const walk = (rel: string) => {
    const names = fs.readdirSync(path.join(dir, rel)).sort();
    for (const n of names) {
      const r = rel ? `${rel}/${n}` : n;
      if (skip(r) || isLedger(r)) continue;
      const full = path.join(dir, r);
      const st = fs.lstatSync(full);
      h.update(`${r}\0${st.mode.toString(8)}\0`);
      if (st.isSymbolicLink()) h.update(`link:${fs.readlinkSync(full)}\0`);
      else if (st.isFile()) h.update(fs.readFileSync(full)).update('\0');
      else if (st.isDirectory()) walk(r);
    }
  };
  walk('');
  return h.digest('hex');
}

export interface ForgedTar {
  /** Raw bytes of the name (a string is written as UTF-8); at most 100 bytes (use `pax` for longer). */
  name: string | Buffer;
  data?: Buffer | string;
  /** The typeflag character: '0' file (default), '5' folder, '2' symlink, '1' hard link, '3' char device, '6' FIFO… */
  type?: string;
  mode?: number;
  linkname?: string;
  /** Lies: the size written in the header (the data written is `data` as it is, padded to 512). */
  declaredSize?: number;
  /** A pax path record written before the entry (a long or UTF-8 name). */
  paxPath?: string;
  /** Breaks the header checksum. */
  badChecksum?: boolean;
}

function tarHeader(name: Buffer, size: number, type: string, mode: number, linkname = '', badChecksum = false): Buffer {
  const h = Buffer.alloc(512);
  name.copy(h, 0, 0, Math.min(name.length, 100));
  const octal = (n: number, width: number) => n.toString(8).padStart(width - 1, '0') + '\0';
  h.write(octal(mode, 8), 100, 'latin1');
  h.write(octal(0, 8), 108, 'latin1');
  h.write(octal(0, 8), 116, 'latin1');
  h.write(octal(size, 12), 124, 'latin1');
  h.write(octal(0, 12), 136, 'latin1');
  h.write('        ', 148, 'latin1');
  h.write(type, 156, 'latin1');
  h.write(linkname, 157, 'utf8');
  h.write('ustar\x0000', 257, 'latin1');
  let sum = 0;
  for (const b of h) sum += b;
  h.write(octal(badChecksum ? sum + 1 : sum, 7) + ' ', 148, 'latin1');
  return h;
}

function padded(data: Buffer): Buffer[] {
  const rest = data.length % 512;
  return rest === 0 ? [data] : [data, Buffer.alloc(512 - rest)];
}

/**
 * Builds a ustar archive from forged entries, by hand (a header is 512 bytes of fixed fields), so a
 * test can write what no tar tool would: raw non-UTF-8 names, hostile names and types, lying sizes.
 */
export function forgeTar(entries: ForgedTar[]): Buffer {
  const parts: Buffer[] = [];
  for (const e of entries) {
    const name = Buffer.isBuffer(e.name) ? e.name : Buffer.from(e.name, 'utf8');
    const data = e.data === undefined ? Buffer.alloc(0) : Buffer.isBuffer(e.data) ? e.data : Buffer.from(e.data);
    const type = e.type ?? '0';
    if (e.paxPath !== undefined) {
      const body = (len: number) => `${len} path=${e.paxPath}\n`;
      let len = Buffer.byteLength(body(0));
      while (Buffer.byteLength(body(len)) !== len) len = Buffer.byteLength(body(len));
      const rec = Buffer.from(body(len));
      parts.push(tarHeader(Buffer.from('PaxHeader'), rec.length, 'x', 0o644), ...padded(rec));
    }
    parts.push(tarHeader(name, e.declaredSize ?? data.length, type, e.mode ?? (type === '5' ? 0o755 : 0o644), e.linkname, e.badChecksum));
    parts.push(...padded(data));
  }
  parts.push(Buffer.alloc(1024));
  return Buffer.concat(parts);
}
