/**
 * Typed JSON (op.ts) to the NBT payload and the file's bytes: the function's side of a write,
 * before any Job. Every tag is checked, and a bad one is refused with its JSON path in the body
 * (`root.value.Data.value.Time.value`), so a caller's mistake is a 400 naming where it is. The
 * encoding is the inverse of job/nbt-decode.ts: names in the order given, a list's element type as
 * given (an empty list keeps its own), strings in Java's modified UTF-8. Pure.
 * @module
 */
import zlib from 'node:zlib';
import { NBT_MAX_DEPTH, NBT_TYPES, type NbtCompression, type NbtType } from './op.ts';

/** A body that is not typed NBT: `path` is where in the body, `message` what is wrong there. */
export class NbtBodyError extends Error {
  readonly path: string;
  constructor(path: string, what: string) {
    super(`${path} ${what}`);
    this.name = 'NbtBodyError';
    this.path = path;
  }
}

const INT_RANGE = { byte: [-128, 127], short: [-32768, 32767], int: [-2147483648, 2147483647] } as const;
const LONG_MIN = -(1n << 63n);
const LONG_MAX = (1n << 63n) - 1n;
const MAX_ARRAY = 0x7fffffff;

/** `a.b` for a plain word, `a["x y"]` else; `a[3]` for an element. */
function keyPath(parent: string, key: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `${parent}.${key}` : `${parent}[${JSON.stringify(key)}]`;
}

/** Grows as it is written; one buffer, doubled when full. */
class Writer {
  b = Buffer.allocUnsafe(4096);
  n = 0;
  room(k: number): void {
    if (this.n + k <= this.b.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.b.length * 2, this.n + k));
    this.b.copy(next, 0, 0, this.n);
    this.b = next;
  }
  u8(v: number): void {
    this.room(1);
    this.b[this.n++] = v & 0xff;
  }
  i8(v: number): void {
    this.room(1);
    this.b.writeInt8(v, this.n++);
  }
  i16(v: number): void {
    this.room(2);
    this.b.writeInt16BE(v, this.n);
    this.n += 2;
  }
  i32(v: number): void {
    this.room(4);
    this.b.writeInt32BE(v, this.n);
    this.n += 4;
  }
  i64(v: bigint): void {
    this.room(8);
    this.b.writeBigInt64BE(v, this.n);
    this.n += 8;
  }
  f32(v: number): void {
    this.room(4);
    this.b.writeFloatBE(v, this.n);
    this.n += 4;
  }
  f64(v: number): void {
    this.room(8);
    this.b.writeDoubleBE(v, this.n);
    this.n += 8;
  }
  /** Java's DataOutput.writeUTF: U+0000 as C0 80, a surrogate as three bytes of its own. */
  utf(s: string, at: string): void {
    let len = 0;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      len += c >= 1 && c <= 0x7f ? 1 : c <= 0x7ff ? 2 : 3;
    }
    if (len > 0xffff) throw new NbtBodyError(at, `is ${len} bytes in modified UTF-8; NBT strings hold at most 65535`);
    this.room(2 + len);
    this.b.writeUInt16BE(len, this.n);
    this.n += 2;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c >= 1 && c <= 0x7f) this.b[this.n++] = c;
      else if (c <= 0x7ff) {
        this.b[this.n++] = 0xc0 | (c >> 6);
        this.b[this.n++] = 0x80 | (c & 0x3f);
      } else {
        this.b[this.n++] = 0xe0 | (c >> 12);
        this.b[this.n++] = 0x80 | ((c >> 6) & 0x3f);
        this.b[this.n++] = 0x80 | (c & 0x3f);
      }
    }
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function integer(v: unknown, type: 'byte' | 'short' | 'int', at: string): number {
  const [lo, hi] = INT_RANGE[type];
  if (typeof v !== 'number' || !Number.isInteger(v) || v < lo || v > hi) throw new NbtBodyError(at, `must be a whole number from ${lo} to ${hi} (a ${type})`);
  return v;
}

function long(v: unknown, at: string): bigint {
  let n: bigint | undefined;
  if (typeof v === 'string' && /^-?(0|[1-9][0-9]{0,18})$/.test(v)) n = BigInt(v);
  else if (typeof v === 'number' && Number.isSafeInteger(v)) n = BigInt(v);
  if (n === undefined || n < LONG_MIN || n > LONG_MAX) throw new NbtBodyError(at, 'must be a long: a decimal string from -9223372036854775808 to 9223372036854775807');
  return n;
}

function float(v: unknown, at: string): number {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (v === 'NaN') return Number.NaN;
  if (v === 'Infinity') return Infinity;
  if (v === '-Infinity') return -Infinity;
  if (v === '-0') return -0;
  throw new NbtBodyError(at, 'must be a number, or "NaN", "Infinity", "-Infinity" or "-0"');
}

function tagType(v: unknown, at: string): NbtType {
  if (typeof v !== 'string' || !(NBT_TYPES as readonly string[]).includes(v)) throw new NbtBodyError(at, `must be one of ${NBT_TYPES.join(', ')}`);
  return v as NbtType;
}

/** `{type, value}` and nothing else (a misspelt key would be lost silently). */
function typed(v: unknown, at: string, extra: string[] = []): { type: unknown; value: unknown } {
  if (!isObject(v)) throw new NbtBodyError(at, 'must be an object {"type", "value"}');
  for (const k of Object.keys(v)) if (k !== 'type' && k !== 'value' && !extra.includes(k)) throw new NbtBodyError(keyPath(at, k), 'is not a field of a tag (only "type" and "value")');
  if (!('value' in v)) throw new NbtBodyError(at, 'has no "value"');
  return v as { type: unknown; value: unknown };
}

function array(v: unknown, at: string): unknown[] {
  if (!Array.isArray(v)) throw new NbtBodyError(at, 'must be an array');
  if (v.length > MAX_ARRAY) throw new NbtBodyError(at, 'has too many elements');
  return v;
}

function value(w: Writer, type: NbtType, v: unknown, at: string, depth: number): void {
  switch (type) {
    case 'byte':
      return w.i8(integer(v, 'byte', at));
    case 'short':
      return w.i16(integer(v, 'short', at));
    case 'int':
      return w.i32(integer(v, 'int', at));
    case 'long':
      return w.i64(long(v, at));
    case 'float':
      return w.f32(float(v, at));
    case 'double':
      return w.f64(float(v, at));
    case 'string':
      if (typeof v !== 'string') throw new NbtBodyError(at, 'must be a string');
      return w.utf(v, at);
    case 'byteArray': {
      const a = array(v, at);
      w.i32(a.length);
      for (let i = 0; i < a.length; i++) w.i8(integer(a[i], 'byte', `${at}[${i}]`));
      return;
    }
    case 'intArray': {
      const a = array(v, at);
      w.i32(a.length);
      for (let i = 0; i < a.length; i++) w.i32(integer(a[i], 'int', `${at}[${i}]`));
      return;
    }
    case 'longArray': {
      const a = array(v, at);
      w.i32(a.length);
      for (let i = 0; i < a.length; i++) w.i64(long(a[i], `${at}[${i}]`));
      return;
    }
    case 'list': {
      if (depth >= NBT_MAX_DEPTH) throw new NbtBodyError(at, `is nested deeper than ${NBT_MAX_DEPTH} levels`);
      const l = typed(v, at);
      const elem = tagType(l.type, `${at}.type`);
      const a = array(l.value, `${at}.value`);
      if (elem === 'end' && a.length > 0) throw new NbtBodyError(`${at}.type`, 'is "end", which only an empty list may have');
      w.u8(NBT_TYPES.indexOf(elem));
      w.i32(a.length);
      for (let i = 0; i < a.length; i++) value(w, elem, a[i], `${at}.value[${i}]`, depth + 1);
      return;
    }
    case 'compound': {
      if (depth >= NBT_MAX_DEPTH) throw new NbtBodyError(at, `is nested deeper than ${NBT_MAX_DEPTH} levels`);
      if (!isObject(v)) throw new NbtBodyError(at, 'must be an object of named tags');
      for (const [name, child] of Object.entries(v)) {
        const cat = keyPath(at, name);
        const t = typed(child, cat);
        const ct = tagType(t.type, `${cat}.type`);
        if (ct === 'end') throw new NbtBodyError(`${cat}.type`, 'cannot be "end"');
        w.u8(NBT_TYPES.indexOf(ct));
        w.utf(name, cat);
        value(w, ct, t.value, `${cat}.value`, depth + 1);
      }
      w.u8(0);
      return;
    }
    default:
      throw new NbtBodyError(at, 'has the type "end", which holds nothing');
  }
}

/** The payload of a typed root (`{type:"compound", name, value}`); throws NbtBodyError naming the bad tag under `at`. */
export function encodeNbt(root: unknown, at = 'root'): Buffer {
  const r = typed(root, at, ['name']) as { type: unknown; value: unknown; name?: unknown };
  if (r.type !== 'compound') throw new NbtBodyError(`${at}.type`, 'must be "compound" (the root of an NBT file)');
  const name = r.name ?? '';
  if (typeof name !== 'string') throw new NbtBodyError(`${at}.name`, 'must be a string');
  const w = new Writer();
  w.u8(10);
  w.utf(name, `${at}.name`);
  value(w, 'compound', r.value, `${at}.value`, 0);
  return w.b.subarray(0, w.n);
}

/** The file's bytes: the payload compressed as asked (gzip and zlib at zlib's default level, as the game writes them). */
export function compressNbt(payload: Buffer, compression: NbtCompression): Buffer {
  if (compression === 'gzip') return zlib.gzipSync(payload);
  if (compression === 'zlib') return zlib.deflateSync(payload);
  return payload;
}
