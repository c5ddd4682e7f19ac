/**
 * Zip fixtures made without a zip tool: the benchmarks' and the container tier's million-entry archive.
 * @module
 */
import * as fs from 'node:fs';
import * as zlib from 'node:zlib';

/** Writes a zip of `n` small stored entries in 1000 folders, streaming (the generator holds only the central directory). */
export function smallEntriesZip(file: string, n: number): void {
  const fd = fs.openSync(file, 'w');
  const central: Buffer[] = [];
  let offset = 0;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  const flush = () => {
    fs.writeSync(fd, Buffer.concat(pending));
    pending = [];
    pendingBytes = 0;
  };
  for (let i = 0; i < n; i++) {
    const name = Buffer.from(`d${Math.floor(i / 1000)}/f${i}.txt`);
    const data = Buffer.from(`entry ${i} `.repeat(8));
    const crc = zlib.crc32(data);
    const h = Buffer.alloc(30);
    h.writeUInt32LE(0x04034b50, 0);
    h.writeUInt16LE(20, 4);
    h.writeUInt16LE(0x21, 12);
    h.writeUInt32LE(crc, 14);
    h.writeUInt32LE(data.length, 18);
    h.writeUInt32LE(data.length, 22);
    h.writeUInt16LE(name.length, 26);
    const c = Buffer.alloc(46);
    c.writeUInt32LE(0x02014b50, 0);
    c.writeUInt16LE((3 << 8) | 20, 4);
    c.writeUInt16LE(20, 6);
    c.writeUInt16LE(0x21, 14);
    c.writeUInt32LE(crc, 16);
    c.writeUInt32LE(data.length, 20);
    c.writeUInt32LE(data.length, 24);
    c.writeUInt16LE(name.length, 28);
    c.writeUInt32LE((0o100644 << 16) >>> 0, 38);
    c.writeUInt32LE(offset, 42);
    central.push(c, name);
    pending.push(h, name, data);
    pendingBytes += 30 + name.length + data.length;
    offset += 30 + name.length + data.length;
    if (pendingBytes > 4 << 20) flush();
  }
  flush();
  const cd = Buffer.concat(central);
  // Zip64 end records when there are more than 65535 entries.
  const tail: Buffer[] = [];
  if (n > 0xffff) {
    const z = Buffer.alloc(56);
    z.writeUInt32LE(0x06064b50, 0);
    z.writeBigUInt64LE(44n, 4);
    z.writeUInt16LE(45, 12);
    z.writeUInt16LE(45, 14);
    z.writeBigUInt64LE(BigInt(n), 24);
    z.writeBigUInt64LE(BigInt(n), 32);
    z.writeBigUInt64LE(BigInt(cd.length), 40);
    z.writeBigUInt64LE(BigInt(offset), 48);
    const l = Buffer.alloc(20);
    l.writeUInt32LE(0x07064b50, 0);
    l.writeBigUInt64LE(BigInt(offset + cd.length), 8);
    l.writeUInt32LE(1, 16);
    tail.push(z, l);
  }
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(Math.min(n, 0xffff), 8);
  end.writeUInt16LE(Math.min(n, 0xffff), 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  fs.writeSync(fd, Buffer.concat([cd, ...tail, end]));
  fs.closeSync(fd);
}
