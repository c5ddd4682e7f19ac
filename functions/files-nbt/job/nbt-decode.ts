/**
 * An NBT file's bytes to typed JSON (../op.ts), for a file that may be hostile: the compression
 * told by its first bytes, inflating stopped past NBT_PAYLOAD_MAX_BYTES, nesting past
 * NBT_MAX_DEPTH refused, every declared length checked against the bytes left before anything is
 * allocated, and the JSON's least size counted as it grows, so a small payload of many tags stops
 * at NBT_JSON_MAX_CHARS instead of filling the heap. Strings are Java's modified UTF-8, read
 * strictly: what would not encode back to the same bytes is refused, so an unchanged document
 * encodes to the payload it came from (nbt-encode.ts). Pure.
 * @module
 */
import zlib from 'node:zlib';
import { NBT_JSON_MAX_CHARS, NBT_MAX_DEPTH, NBT_PAYLOAD_MAX_BYTES, NBT_TYPES, type NbtCompound, type NbtCompression, type NbtFloat, type NbtRoot, type NbtType, type NbtValue } from '../op.ts';

/** Why a file cannot be answered: not NBT this reads (`nbt_invalid`), or more than the answer may hold (`too_large`). */
export class NbtRefusal extends Error {
  readonly code: 'nbt_invalid' | 'too_large';
  constructor(code: 'nbt_invalid' | 'too_large', message: string) {
    super(message);
    this.name = 'NbtRefusal';
    this.code = code;
  }
}

/** gzip by its magic; zlib by its header (deflate, a checksum that divides by 31); else bare NBT. */
export function compressionOf(b: Buffer): NbtCompression {
  if (b.length >= 2 && b[0] === 0x1f && b[1] === 0x8b) return 'gzip';
  if (b.length >= 2 && (b[0]! & 0x0f) === 8 && b[0]! >> 4 <= 7 && ((b[0]! << 8) | b[1]!) % 31 === 0) return 'zlib';
  return 'none';
}

/** The NBT inside the file, inflated to at most NBT_PAYLOAD_MAX_BYTES (zlib stops there: a bomb costs that much, no more). */
export function payloadOf(file: Buffer, compression: NbtCompression, max = NBT_PAYLOAD_MAX_BYTES): Buffer {
  if (compression === 'none') return file;
  try {
    return compression === 'gzip' ? zlib.gunzipSync(file, { maxOutputLength: max }) : zlib.inflateSync(file, { maxOutputLength: max });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' || e instanceof RangeError) {
      throw new NbtRefusal('nbt_invalid', `it decompresses to more than ${max} bytes`);
    }
    throw new NbtRefusal('nbt_invalid', `its ${compression} data is damaged (${(e as Error).message})`);
  }
}

/** The least bytes one element of each type takes in the payload (end: none, so a list of it must be empty). */
const MIN_SIZE = [0, 1, 2, 4, 8, 4, 8, 4, 2, 5, 1, 4, 4] as const;

/** `a.b[3]` for humans; a name that is not a plain word is quoted. */
export function childPath(parent: string, name: string): string {
  const key = /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? name : JSON.stringify(name);
  return parent === '' ? key : /^[A-Za-z_]/.test(key) ? `${parent}.${key}` : `${parent}[${key}]`;
}

/** Where the reader is, as the message names it: each compound's name or list's index, formatted only for an error. */
function pathOf(stack: (string | number)[]): string {
  let p = '';
  for (const k of stack) p = typeof k === 'number' ? `${p}[${k}]` : childPath(p, k);
  return p || 'the root';
}

class Reader {
  pos = 0;
  /** The names and indexes leading to the tag being read. */
  readonly stack: (string | number)[] = [];
  /** The least length the JSON of what was read so far has. */
  json = 0;
  readonly b: Buffer;
  constructor(b: Buffer) {
    this.b = b;
  }

  where(): string {
    return pathOf(this.stack);
  }
  need(n: number): void {
    if (n > this.b.length - this.pos) throw new NbtRefusal('nbt_invalid', `it ends inside ${this.where()} (${n} more bytes declared, ${this.b.length - this.pos} left)`);
  }
  grow(chars: number): void {
    this.json += chars;
    if (this.json > NBT_JSON_MAX_CHARS) throw new NbtRefusal('too_large', `its JSON would be longer than ${NBT_JSON_MAX_CHARS} characters`);
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
  type(): NbtType {
    const id = this.u8();
    const t = NBT_TYPES[id];
    if (t === undefined) throw new NbtRefusal('nbt_invalid', `${this.where()} has the unknown tag type ${id}`);
    return t;
  }
  /** A length-prefixed modified-UTF-8 string (Java's DataOutput.writeUTF), read strictly. */
  string(): string {
    this.need(2);
    const n = this.b.readUInt16BE(this.pos);
    this.pos += 2;
    this.need(n);
    const s = decodeModifiedUtf8(this.b, this.pos, this.pos + n, this);
    this.pos += n;
    this.grow(s.length + 2);
    return s;
  }
  /** A count of elements of `size` bytes each, checked against the bytes left and the JSON's room before anything is made. */
  count(size: number, jsonEach: number): number {
    const n = this.i32();
    if (n < 0) throw new NbtRefusal('nbt_invalid', `${this.where()} declares ${n} elements`);
    this.need(n * size);
    this.grow(n * jsonEach);
    return n;
  }
}

/** Java's modified UTF-8 as UTF-16 units; anything Java would not have written this way is refused (raw NUL, overlong forms, 4-byte forms). */
export function decodeModifiedUtf8(b: Buffer, start: number, end: number, r: { where(): string }): string {
  let ascii = true;
  for (let i = start; i < end; i++) {
    const c = b[i]!;
    if (c === 0 || c >= 0x80) {
      ascii = false;
      break;
    }
  }
  if (ascii) return b.toString('latin1', start, end);
  const units: number[] = [];
  const bad = () => new NbtRefusal('nbt_invalid', `the string at ${r.where()} is not Java's modified UTF-8`);
  for (let i = start; i < end; ) {
    const c = b[i]!;
    if (c >= 1 && c < 0x80) {
      units.push(c);
      i++;
    } else if ((c & 0xe0) === 0xc0) {
      if (i + 1 >= end || (b[i + 1]! & 0xc0) !== 0x80) throw bad();
      const u = ((c & 0x1f) << 6) | (b[i + 1]! & 0x3f);
      if (u !== 0 && u < 0x80) throw bad();
      units.push(u);
      i += 2;
    } else if ((c & 0xf0) === 0xe0) {
      if (i + 2 >= end || (b[i + 1]! & 0xc0) !== 0x80 || (b[i + 2]! & 0xc0) !== 0x80) throw bad();
      const u = ((c & 0x0f) << 12) | ((b[i + 1]! & 0x3f) << 6) | (b[i + 2]! & 0x3f);
      if (u < 0x800) throw bad();
      units.push(u);
      i += 3;
    } else throw bad();
  }
  let s = '';
  for (let i = 0; i < units.length; i += 4096) s += String.fromCharCode(...units.slice(i, i + 4096));
  return s;
}

/** A float or double as JSON carries it (op.ts NbtFloat). */
function floatJson(v: number): NbtFloat {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return 'Infinity';
  if (v === -Infinity) return '-Infinity';
  if (Object.is(v, -0)) return '-0';
  return v;
}

function payload(r: Reader, type: NbtType, depth: number): NbtValue {
  const b = r.b;
  switch (type) {
    case 'byte':
      r.need(1);
      return b.readInt8(r.pos++);
    case 'short': {
      r.need(2);
      const v = b.readInt16BE(r.pos);
      r.pos += 2;
      return v;
    }
    case 'int':
      return r.i32();
    case 'long': {
      r.need(8);
      const v = b.readBigInt64BE(r.pos).toString();
      r.pos += 8;
      r.grow(v.length);
      return v;
    }
    case 'float': {
      r.need(4);
      const v = b.readFloatBE(r.pos);
      r.pos += 4;
      return floatJson(v);
    }
    case 'double': {
      r.need(8);
      const v = b.readDoubleBE(r.pos);
      r.pos += 8;
      return floatJson(v);
    }
    case 'byteArray': {
      const n = r.count(1, 2);
      const out = new Array<number>(n);
      for (let i = 0; i < n; i++) out[i] = b.readInt8(r.pos + i);
      r.pos += n;
      return out;
    }
    case 'intArray': {
      const n = r.count(4, 2);
      const out = new Array<number>(n);
      for (let i = 0; i < n; i++) out[i] = b.readInt32BE(r.pos + 4 * i);
      r.pos += 4 * n;
      return out;
    }
    case 'longArray': {
      const n = r.count(8, 4);
      const out = new Array<string>(n);
      for (let i = 0; i < n; i++) out[i] = b.readBigInt64BE(r.pos + 8 * i).toString();
      r.pos += 8 * n;
      return out;
    }
    case 'string':
      return r.string();
    case 'list': {
      if (depth >= NBT_MAX_DEPTH) throw new NbtRefusal('nbt_invalid', `${r.where()} is nested deeper than ${NBT_MAX_DEPTH} levels`);
      const elem = r.type();
      const id = NBT_TYPES.indexOf(elem);
      const n = r.count(MIN_SIZE[id]!, 2);
      if (elem === 'end' && n > 0) throw new NbtRefusal('nbt_invalid', `${r.where()} holds ${n} elements of no type`);
      const value = new Array<NbtValue>(n);
      const top = r.stack.length;
      for (let i = 0; i < n; i++) {
        r.stack[top] = i;
        value[i] = payload(r, elem, depth + 1);
      }
      r.stack.length = top;
      return { type: elem, value };
    }
    case 'compound': {
      if (depth >= NBT_MAX_DEPTH) throw new NbtRefusal('nbt_invalid', `${r.where()} is nested deeper than ${NBT_MAX_DEPTH} levels`);
      // No prototype: a tag named __proto__ is a tag like any other.
      const value: NbtCompound = Object.create(null);
      const top = r.stack.length;
      for (;;) {
        r.stack.length = top;
        const t = r.type();
        if (t === 'end') return value;
        const name = r.string();
        if (Object.hasOwn(value, name)) throw new NbtRefusal('nbt_invalid', `${r.where()} holds the name ${JSON.stringify(name)} twice`);
        r.grow(20);
        r.stack[top] = name;
        value[name] = { type: t, value: payload(r, t, depth + 1) };
      }
    }
    default:
      throw new NbtRefusal('nbt_invalid', `${r.where()} has a tag of no type`);
  }
}

/** The root compound of an NBT payload; anything after it is refused (it could not be written back). */
export function decodeNbt(b: Buffer): NbtRoot {
  const r = new Reader(b);
  const t = r.type();
  if (t !== 'compound') throw new NbtRefusal('nbt_invalid', `its root is a ${t}, not a compound`);
  const name = r.string();
  const value = payload(r, 'compound', 0) as NbtCompound;
  if (r.pos !== b.length) throw new NbtRefusal('nbt_invalid', `it has ${b.length - r.pos} bytes after its root compound`);
  return { type: 'compound', name, value };
}
