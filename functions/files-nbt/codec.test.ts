/**
 * The NBT codec both ways (job/nbt-decode.ts, nbt-encode.ts): files prismarine-nbt wrote decode,
 * go through JSON and encode back to the very bytes; every tag type at its edges; Java's modified
 * UTF-8; and hostile files refused in bounded time and memory.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import zlib from 'node:zlib';
import nbt from 'prismarine-nbt';
import { fileOf, levelDoc, playerDoc, payloadOf as prismarinePayload } from './fixtures.test-kit.ts';
import { compressionOf, decodeNbt, NbtRefusal, payloadOf } from './job/nbt-decode.ts';
import { compressNbt, encodeNbt, NbtBodyError } from './nbt-encode.ts';
import { NBT_PAYLOAD_MAX_BYTES } from './op.ts';

/** Through JSON text, as the answer and a PUT body carry it. */
const viaJson = (b: Buffer) => encodeNbt(JSON.parse(JSON.stringify(decodeNbt(b))));

/** Bytes of a root compound named "" holding `inner` (its tags) and its end. */
const rootOf = (...inner: Buffer[]) => Buffer.concat([Buffer.from([10, 0, 0]), ...inner, Buffer.from([0])]);
const named = (type: number, name: string, payload: Buffer) => Buffer.concat([Buffer.from([type, 0, name.length]), Buffer.from(name, 'latin1'), payload]);
const refused = (b: Buffer, code: string, re: RegExp) =>
  assert.throws(
    () => decodeNbt(b),
    (e: unknown) => e instanceof NbtRefusal && e.code === code && re.test(e.message),
  );

for (const [what, doc] of [
  ['level.dat', levelDoc()],
  ['playerdata', playerDoc()],
] as const) {
  for (const compression of ['gzip', 'zlib', 'none'] as const) {
    test(`a ${what}-shaped file (${compression}) reads, and its JSON writes back the same NBT`, () => {
      const payload = prismarinePayload(doc);
      const file = fileOf(payload, compression);
      assert.equal(compressionOf(file), compression);
      const inner = payloadOf(file, compression);
      assert.ok(inner.equals(payload));
      assert.ok(viaJson(inner).equals(payload), 'the encoding of the JSON is the payload, byte for byte');
      // Recompressed, the bytes are the file's (the same zlib at its default level made both).
      assert.ok(compressNbt(viaJson(inner), compression).equals(file));
    });
  }
}

test('the JSON says what prismarine-nbt reads, longs as decimal strings', () => {
  const payload = prismarinePayload(levelDoc());
  const ours = JSON.parse(JSON.stringify(decodeNbt(payload))) as { value: { Data: { value: Record<string, { type: string; value: unknown }> } } };
  const theirs = nbt.simplify(nbt.parseUncompressed(payload)) as { Data: Record<string, unknown> };
  const data = ours.value.Data.value;
  assert.equal(data.LevelName!.value, theirs.Data.LevelName);
  assert.deepEqual(data.WorldGenSettings!.value, {
    seed: { type: 'long', value: '-4172144997902289642' },
    generate_features: { type: 'byte', value: 1 },
    bonus_chest: { type: 'byte', value: 0 },
    dimensions: { type: 'compound', value: { 'minecraft:overworld': { type: 'compound', value: { type: { type: 'string', value: 'minecraft:overworld' } } } } },
  });
  assert.deepEqual(data.Timestamps!.value, ['-9223372036854775808', '9223372036854775807', '0']);
  assert.deepEqual(data.ScheduledEvents, { type: 'list', value: { type: 'end', value: [] } });
  assert.deepEqual(data.DataPacks!.value, { Enabled: { type: 'list', value: { type: 'string', value: ['vanilla', 'file/felis'] } }, Disabled: { type: 'list', value: { type: 'string', value: [] } } });
});

test('every tag type round-trips at its edges, floats exactly, the ones JSON has no number for as strings', () => {
  const doc = {
    type: 'compound',
    name: 'named root',
    value: {
      b: { type: 'byte', value: -128 },
      s: { type: 'short', value: 32767 },
      i: { type: 'int', value: -2147483648 },
      l: { type: 'long', value: '9223372036854775807' },
      f: { type: 'float', value: Math.fround(0.1) },
      fn: { type: 'float', value: 'NaN' },
      fi: { type: 'float', value: '-Infinity' },
      fz: { type: 'float', value: '-0' },
      d: { type: 'double', value: 5e-324 },
      di: { type: 'double', value: 'Infinity' },
      dz: { type: 'double', value: '-0' },
      ba: { type: 'byteArray', value: [-1, 0, 127] },
      ia: { type: 'intArray', value: [] },
      la: { type: 'longArray', value: ['-1', '0'] },
      str: { type: 'string', value: '' },
      ll: {
        type: 'list',
        value: {
          type: 'list',
          value: [
            { type: 'int', value: [1] },
            { type: 'end', value: [] },
          ],
        },
      },
      lc: { type: 'list', value: { type: 'compound', value: [{}, { x: { type: 'short', value: 1 } }] } },
      ls: { type: 'list', value: { type: 'long', value: ['1', '-2'] } },
      c: { type: 'compound', value: { __proto__: { type: 'int', value: 3 } } },
    },
  };
  // JSON.parse keeps a "__proto__" key as a key (a literal would set the prototype).
  const body = JSON.parse(JSON.stringify(doc).replace('"c":{"type":"compound","value":{}}', '"c":{"type":"compound","value":{"__proto__":{"type":"int","value":3}}}'));
  const bytes = encodeNbt(body);
  const back = decodeNbt(bytes);
  assert.deepEqual(JSON.parse(JSON.stringify(back)), body);
  assert.ok(encodeNbt(JSON.parse(JSON.stringify(back))).equals(bytes));
  const f = back.value.f!.value;
  assert.equal(f, Math.fround(0.1), 'a float32 arrives as the exact double of its value');
  assert.ok(bytes.includes(Buffer.from([0x80, 0, 0, 0])), '-0 keeps its sign bit');
});

test("strings are Java's modified UTF-8: U+0000 as C0 80, a supplementary character as two three-byte surrogates", () => {
  const s = 'a\u0000é€😀';
  const java = Buffer.from('61c080c3a9e282aceda0bdedb880', 'hex');
  const bytes = encodeNbt({ type: 'compound', name: '', value: { s: { type: 'string', value: s } } });
  assert.ok(bytes.equals(rootOf(named(8, 's', Buffer.concat([Buffer.from([0, java.length]), java])))));
  assert.equal(decodeNbt(bytes).value.s!.value, s);
  // What Java never writes, and so could not be written back the same, is refused: a bare NUL,
  // a four-byte form (standard UTF-8 of 😀), an overlong form, a cut sequence.
  for (const bad of ['00', 'f09f9880', 'c1a1', 'e282']) {
    const b = Buffer.from(bad, 'hex');
    refused(rootOf(named(8, 's', Buffer.concat([Buffer.from([0, b.length]), b]))), 'nbt_invalid', /string at s is not Java's modified UTF-8/);
  }
});

test('what could not be written back the same is refused: a name twice, bytes after the root, a root that is not a compound', () => {
  const one = named(1, 'x', Buffer.from([1]));
  refused(rootOf(one, one), 'nbt_invalid', /holds the name "x" twice/);
  refused(Buffer.concat([rootOf(one), Buffer.from([0])]), 'nbt_invalid', /1 bytes after its root/);
  refused(Buffer.from([1, 0, 0, 5]), 'nbt_invalid', /root is a byte/);
  refused(rootOf(named(13, 'x', Buffer.alloc(0))), 'nbt_invalid', /unknown tag type 13/);
  refused(rootOf(named(9, 'l', Buffer.from([0, 0, 0, 0, 2]))), 'nbt_invalid', /holds 2 elements of no type/);
});

test('hostile files are refused before anything their lengths declare is made', () => {
  const int32 = (n: number) => Buffer.from([n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255]);
  // Declared lengths far past the end: arrays, a list, a string.
  for (const [type, len] of [
    [7, 0x7fffffff],
    [11, 0x40000000],
    [12, 0x20000000],
  ] as const) {
    refused(rootOf(named(type, 'a', int32(len))), 'nbt_invalid', /ends inside a \(/);
  }
  refused(rootOf(named(9, 'l', Buffer.concat([Buffer.from([10]), int32(0x7fffffff)]))), 'nbt_invalid', /ends inside l/);
  refused(rootOf(named(8, 's', Buffer.from([0xff, 0xff, 0x61]))), 'nbt_invalid', /ends inside s/);
  refused(rootOf(named(7, 'a', int32(-1))), 'nbt_invalid', /declares -1 elements/);
  // Nesting: 600 lists in lists.
  const deep = Buffer.concat([Buffer.from([10, 0, 0, 9, 0, 1, 0x6c]), ...Array.from({ length: 600 }, () => Buffer.from([9, 0, 0, 0, 1])), Buffer.from([0, 0, 0, 0, 0, 0])]);
  refused(deep, 'nbt_invalid', /nested deeper than 512 levels/);
  // A gzip bomb: a few KiB that would inflate to 64 MiB stops at the limit.
  const bomb = zlib.gzipSync(Buffer.alloc(64 << 20));
  assert.ok(bomb.length < 128 << 10);
  const before = process.memoryUsage().rss;
  assert.throws(
    () => payloadOf(bomb, 'gzip'),
    (e: unknown) => e instanceof NbtRefusal && e.code === 'nbt_invalid' && /decompresses to more than 33554432 bytes/.test(e.message),
  );
  assert.throws(() => payloadOf(zlib.deflateSync(Buffer.alloc(64 << 20)), 'zlib'), /decompresses to more than/);
  assert.ok(process.memoryUsage().rss - before < NBT_PAYLOAD_MAX_BYTES * 3, 'inflating stopped near the limit');
  assert.throws(() => payloadOf(Buffer.from([0x1f, 0x8b, 8, 0, 1, 2, 3]), 'gzip'), /gzip data is damaged/);
  // Many small tags: a list of 8 million empty compounds is 8 MiB of NBT and would be a heap of
  // objects; it stops at the JSON's bound, having made a few of them.
  const many = Buffer.concat([Buffer.from([10, 0, 0, 9, 0, 1, 0x6c, 10]), int32(8 << 20), Buffer.alloc(8 << 20), Buffer.from([0])]);
  const t = performance.now();
  refused(many, 'too_large', /JSON would be longer than 3145728 characters/);
  assert.ok(performance.now() - t < 2000);
});

test('a body that is no typed NBT names the bad tag by its JSON path', () => {
  const bad = (root: unknown, re: RegExp) =>
    assert.throws(
      () => encodeNbt(root),
      (e: unknown) => e instanceof NbtBodyError && re.test(e.message),
    );
  const doc = (value: unknown) => ({ type: 'compound', name: '', value });
  bad(doc({ Data: { type: 'compound', value: { Time: { type: 'long', value: 12.5 } } } }), /^root\.value\.Data\.value\.Time\.value must be a long/);
  bad(doc({ Data: { type: 'compound', value: { Time: { type: 'long', value: '9223372036854775808' } } } }), /Time\.value must be a long/);
  bad(doc({ b: { type: 'byte', value: 128 } }), /^root\.value\.b\.value must be a whole number from -128 to 127/);
  bad(doc({ 'minecraft:x': { type: 'int', value: 1, extra: 2 } }), /^root\.value\["minecraft:x"\]\.extra is not a field/);
  bad(doc({ l: { type: 'list', value: { type: 'int', value: [1, 'two'] } } }), /^root\.value\.l\.value\.value\[1\] must be a whole number/);
  bad(doc({ l: { type: 'list', value: { type: 'end', value: [1] } } }), /^root\.value\.l\.value\.type is "end"/);
  bad(doc({ t: { type: 'short_array', value: [] } }), /^root\.value\.t\.type must be one of/);
  bad(doc({ f: { type: 'float', value: 'nan' } }), /^root\.value\.f\.value must be a number, or "NaN"/);
  bad(doc({ s: { type: 'string', value: 'x'.repeat(65536) } }), /^root\.value\.s\.value is 65536 bytes/);
  bad({ type: 'list', name: '', value: {} }, /^root\.type must be "compound"/);
  bad(doc([]), /^root\.value must be an object of named tags/);
  let deep: unknown = { type: 'int', value: [] };
  for (let i = 0; i < 600; i++) deep = { type: 'list', value: [deep] };
  bad(doc({ d: { type: 'list', value: deep } }), /nested deeper than 512 levels/);
});
