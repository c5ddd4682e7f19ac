/**
 * A chunk's `InhabitedTime` from its stored payload, without building the document: the payload
 * inflated to at most CHUNK_PAYLOAD_MAX_BYTES (a bomb stops there), then the root compound walked,
 * every other tag skipped by its declared size, each size checked against the bytes left and the
 * nesting bounded as the game bounds it (512). Since 1.18 the long is at the root; before, under
 * `Level`. The payload's own NBT rules are files-nbt's (an op's Job code may not import another
 * function's folder, and decoding a whole chunk to typed JSON for one long would cost its full
 * JSON); this reads the same format, and its tests compare both on the same payloads. Pure.
 * @module
 */
import zlib from 'node:zlib';
import type { Compression } from './region-format.ts';

/** What a chunk may inflate to: a packed chunk of 255 sectors holds far less in practice. */
export const CHUNK_PAYLOAD_MAX_BYTES = 32 << 20;
const MAX_DEPTH = 512;
const LONG = 4;
const COMPOUND = 10;
/** Fixed payload sizes by tag id (0 end … 12 longArray); -1: sized by content. */
const FIXED = [0, 1, 2, 4, 8, 4, 8, -1, -1, -1, -1, -1, -1] as const;
/** Element sizes of the arrays: byteArray 7, intArray 11, longArray 12. */
const ARRAY_ELEMENT: Record<number, number> = { 7: 1, 11: 4, 12: 8 };

/** Why a chunk's payload cannot be read: reported on the chunk, which is then never pruned. */
export class ChunkUnreadable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ChunkUnreadable';
  }
}

/** The chunk's NBT, inflated (bounded); lz4 and custom compressions are not read. */
export function inflateChunk(data: Buffer, compression: Compression, max = CHUNK_PAYLOAD_MAX_BYTES): Buffer {
  if (compression === 'none') return data;
  if (compression !== 'gzip' && compression !== 'zlib') throw new ChunkUnreadable(`its compression (${compression}) is not one this reads`);
  try {
    return compression === 'gzip' ? zlib.gunzipSync(data, { maxOutputLength: max }) : zlib.inflateSync(data, { maxOutputLength: max });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' || e instanceof RangeError) throw new ChunkUnreadable(`it inflates to more than ${max} bytes`);
    throw new ChunkUnreadable(`its ${compression} data is damaged (${(e as Error).message})`);
  }
}

class Walker {
  pos = 0;
  readonly b: Buffer;
  constructor(b: Buffer) {
    this.b = b;
  }
  need(n: number): void {
    if (n < 0 || n > this.b.length - this.pos) throw new ChunkUnreadable(`its NBT ends early (at byte ${this.pos}, ${n} more declared)`);
  }
  u8(): number {
    this.need(1);
    return this.b[this.pos++]!;
  }
  i32(): number {
    this.need(4);
    const v = this.b.readInt32BE(this.pos);
    this.pos += 4;
    return v;
  }
  name(): string {
    this.need(2);
    const n = this.b.readUInt16BE(this.pos);
    this.pos += 2;
    this.need(n);
    // Names compared here are ASCII; anything else only has to be skipped.
    const s = this.b.toString('latin1', this.pos, this.pos + n);
    this.pos += n;
    return s;
  }
  /** Skips one payload of tag `t`. */
  skip(t: number, depth: number): void {
    if (t < 0 || t > 12) throw new ChunkUnreadable(`its NBT has the unknown tag type ${t}`);
    const fixed = FIXED[t as keyof typeof FIXED] as number;
    if (fixed >= 0) {
      this.need(fixed);
      this.pos += fixed;
      return;
    }
    if (depth >= MAX_DEPTH) throw new ChunkUnreadable(`its NBT nests deeper than ${MAX_DEPTH} levels`);
    if (t === 8) {
      this.name();
      return;
    }
    const each = ARRAY_ELEMENT[t];
    if (each !== undefined) {
      const n = this.i32();
      if (n < 0) throw new ChunkUnreadable(`its NBT declares an array of ${n} elements`);
      this.need(n * each);
      this.pos += n * each;
      return;
    }
    if (t === 9) {
      const elem = this.u8();
      const n = this.i32();
      if (n < 0) throw new ChunkUnreadable(`its NBT declares a list of ${n} elements`);
      if (n > 0 && elem === 0) throw new ChunkUnreadable('its NBT holds a list of elements of no type');
      const f = elem <= 12 ? (FIXED[elem as keyof typeof FIXED] as number) : -1;
      if (f >= 0) {
        this.need(n * f);
        this.pos += n * f;
        return;
      }
      for (let i = 0; i < n; i++) this.skip(elem, depth + 1);
      return;
    }
    // A compound: named tags to the end tag.
    for (;;) {
      const ct = this.u8();
      if (ct === 0) return;
      this.name();
      this.skip(ct, depth + 1);
    }
  }
  /** In the compound whose payload starts here: the long `InhabitedTime`, else the one under the compound `Level`; the whole compound read. */
  find(depth: number, level: boolean): bigint | undefined {
    let own: bigint | undefined;
    let inner: bigint | undefined;
    for (;;) {
      const t = this.u8();
      if (t === 0) return own ?? inner;
      const n = this.name();
      if (t === LONG && n === 'InhabitedTime') {
        this.need(8);
        own = this.b.readBigInt64BE(this.pos);
        this.pos += 8;
      } else if (t === COMPOUND && n === 'Level' && level) inner = this.find(depth + 1, false);
      else this.skip(t, depth + 1);
    }
  }
}

/**
 * The chunk's InhabitedTime (the root's since 1.18, else `Level`'s); throws ChunkUnreadable when
 * the payload is no NBT compound, ends early, has bytes after its root, or holds no such long.
 */
export function inhabitedTime(nbt: Buffer): bigint {
  const w = new Walker(nbt);
  const t = w.u8();
  if (t !== COMPOUND) throw new ChunkUnreadable(`its NBT root is tag type ${t}, not a compound`);
  w.name();
  const v = w.find(0, true);
  if (w.pos !== nbt.length) throw new ChunkUnreadable(`its NBT has ${nbt.length - w.pos} bytes after the root compound`);
  if (v === undefined) throw new ChunkUnreadable('its NBT holds no InhabitedTime long');
  return v;
}
