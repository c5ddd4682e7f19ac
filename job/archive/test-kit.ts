/**
 * Test-only tools for the archive tests (nothing in main.ts imports this): a zip *forger* that
 * writes raw local headers and central directory records, so a test can build archives no library
 * writer would (lying sizes, bad CRCs, overlapping entries, hostile names, symlink and device
 * modes); and a digest of a whole tree, to prove a refused extraction changed nothing at all.
 *
 * @module
 */
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { createHash } from 'node:crypto';

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
export function treeDigest(dir: string, skip: (rel: string) => boolean = () => false): string {
  const h = createHash('sha256');
  const walk = (rel: string) => {
    const names = fs.readdirSync(path.join(dir, rel)).sort();
    for (const n of names) {
      const r = rel ? `${rel}/${n}` : n;
      if (skip(r)) continue;
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
