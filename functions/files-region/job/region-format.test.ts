/**
 * The region format, pure and on files the kit writes: the header read (every compression, an
 * external chunk, the legacy `Level` form, a long past 2^53), hostile headers (a slot in the
 * header, past the end, overlapping, a length beyond its sectors, a bomb, a truncated payload,
 * lz4), and the compact rewrite: an unpruned rewrite keeps every stored chunk byte for byte.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import zlib from 'node:zlib';
import { decodeNbt } from '../../files-nbt/job/nbt-decode.ts';
import { chunkNbt, compress, regionFile, stored } from '../region.test-kit.ts';
import { ChunkUnreadable, inflateChunk, inhabitedTime } from './chunk-nbt.ts';
import { compactHeader, HEADER_BYTES, parseHeader, regionCoords, SECTOR } from './region-format.ts';
import { type ChunkInfo, packedSectors, readRegion, storedBytes } from './region-io.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'felis-region-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));
let n = 0;
/** Reads `file` (and externals) as the Job does, from a descriptor. */
function read(file: Buffer, externals = new Map<string, Buffer>(), region = { x: 0, z: 0 }) {
  const p = path.join(dir, `r${n++}.mca`);
  fs.writeFileSync(p, file);
  const fd = fs.openSync(p, 'r');
  try {
    return { ...readRegion(fd, file.length, region, (name) => externals.get(name) ?? null, true), p };
  } finally {
    fs.closeSync(fd);
  }
}

test('region names: r.<int>.<int>.mca only', () => {
  assert.deepEqual(regionCoords('r.-3.12.mca'), { x: -3, z: 12 });
  for (const bad of ['r.0.0.mcr', 'r.a.0.mca', 'r.0.0.mca.bak', 'c.0.0.mcc', 'r.0.mca', 'r.00000000.0.mca', '../r.0.0.mca']) assert.equal(regionCoords(bad), null, bad);
});

test('InhabitedTime is read the way files-nbt decodes the same payload, at the root and under Level, past 2^53', () => {
  for (const c of [
    { index: 0, inhabited: 0 },
    { index: 5, inhabited: 123456, legacy: true },
    { index: 6, inhabited: 2n ** 62n + 1n, filler: 5000 },
    { index: 7, inhabited: -1 },
  ]) {
    const nbt = chunkNbt(c);
    const doc = decodeNbt(nbt) as any;
    const want = c.legacy ? doc.value.Level.value.InhabitedTime.value : doc.value.InhabitedTime.value;
    assert.equal(inhabitedTime(nbt).toString(), want);
    assert.equal(inhabitedTime(nbt), BigInt(c.inhabited));
  }
});

test('a table of every compression, an external chunk and gaps between chunks', () => {
  const r = regionFile(
    [
      { index: 0, inhabited: 1, compression: 'gzip' },
      { index: 31, inhabited: 2, compression: 'zlib', filler: 10000 },
      { index: 32, inhabited: 3, compression: 'none', legacy: true },
      { index: 1023, inhabited: 2n ** 60n, compression: 'zlib', external: true },
    ],
    { gap: 2, region: { x: -1, z: 2 } },
  );
  const t = read(r.file, r.externals, { x: -1, z: 2 });
  assert.deepEqual(
    t.chunks.map((c) => [c.index, c.x, c.z, c.compression, c.external, c.inhabited, c.error]),
    [
      [0, -32, 64, 'gzip', false, 1n, undefined],
      [31, -1, 64, 'zlib', false, 2n, undefined],
      [32, -32, 65, 'none', false, 3n, undefined],
      [1023, -1, 95, 'zlib', true, 2n ** 60n, undefined],
    ],
  );
  const fileSectors = r.file.length / SECTOR;
  assert.equal(t.sectorsUsed + t.sectorsFree, fileSectors);
  assert.equal(t.sectorsFree, 4 * 2, 'the gaps');
  assert.equal(t.chunks[1]!.bytes, r.storedByIndex.get(31)!.length - 4);
});

test('hostile headers: in the header, past the end, overlapping, no sectors; each chunk reported, the others read', () => {
  const r = regionFile([
    { index: 0, inhabited: 1 },
    { index: 1, inhabited: 2 },
  ]);
  const fileSectors = r.file.length / SECTOR;
  const hostile = regionFile(
    [
      { index: 0, inhabited: 1 },
      { index: 1, inhabited: 2 },
    ],
    {
      raw: [
        { index: 5, offset: 1, sectors: 1 },
        { index: 6, offset: fileSectors, sectors: 1 },
        { index: 7, offset: 2, sectors: 1 },
        { index: 8, offset: 3, sectors: 0 },
        { index: 9, offset: 0xffffff, sectors: 255 },
      ],
    },
  );
  const t = read(hostile.file);
  const by = new Map(t.chunks.map((c) => [c.index, c]));
  assert.match(by.get(5)!.error!, /inside the header/);
  assert.match(by.get(6)!.error!, /past the file's end/);
  assert.match(by.get(9)!.error!, /past the file's end/);
  assert.match(by.get(7)!.error!, /overlap/);
  assert.match(by.get(0)!.error!, /overlap/, 'the chunk it overlaps cannot be trusted either');
  assert.match(by.get(8)!.error!, /no sectors/);
  assert.equal(by.get(1)!.inhabited, 2n, 'a sound chunk beside them is read');
  assert.ok([5, 6, 7, 8, 9, 0].every((i) => by.get(i)!.corruptSlot && by.get(i)!.inhabited === null));
});

test('hostile chunks: a length beyond its sectors, length 0, damaged data, a bomb, a cut payload, lz4, custom, a missing .mcc', () => {
  const good = compress(chunkNbt({ index: 0, inhabited: 1 }), 'zlib');
  const bomb = zlib.deflateSync(Buffer.alloc(40 << 20));
  const cut = chunkNbt({ index: 0, inhabited: 1 }).subarray(0, 60);
  const bodies: Buffer[] = [
    (() => {
      const b = stored(good, 2);
      b.writeUInt32BE(SECTOR * 3, 0);
      return b;
    })(),
    (() => {
      const b = stored(good, 2);
      b.writeUInt32BE(0, 0);
      return b;
    })(),
    stored(Buffer.from('not zlib at all'), 2),
    stored(bomb, 2),
    stored(cut, 3),
    stored(good, 4),
    stored(good, 127),
    stored(Buffer.alloc(0), 0x82),
    stored(Buffer.from([10, 0, 0, 0]), 3), // a compound without InhabitedTime
  ];
  const header = Buffer.alloc(HEADER_BYTES);
  const parts: Buffer[] = [header];
  let at = 2;
  bodies.forEach((b, i) => {
    const sectors = Math.ceil(b.length / SECTOR);
    header.writeUInt32BE((at << 8) | sectors, 4 * i);
    const padded = Buffer.alloc(sectors * SECTOR);
    b.copy(padded);
    parts.push(padded);
    at += sectors;
  });
  const t = read(Buffer.concat(parts));
  const errors = t.chunks.map((c) => c.error ?? '');
  assert.match(errors[0]!, /exceeds its 1 sectors/);
  assert.match(errors[1]!, /length is 0/);
  assert.match(errors[2]!, /damaged/);
  assert.match(errors[3]!, /more than/);
  assert.match(errors[4]!, /ends early/);
  assert.match(errors[5]!, /lz4/);
  assert.match(errors[6]!, /custom/);
  assert.match(errors[7]!, /c\.7\.0\.mcc is missing/);
  assert.match(errors[8]!, /no InhabitedTime/);
  assert.ok(t.chunks.every((c) => c.inhabited === null && !c.corruptSlot));
  assert.equal(t.chunks[0]!.bytes, null, 'a length beyond its sectors is not given as its length');
});

test('a file shorter than a header is refused; an empty one has no chunks', () => {
  assert.throws(() => read(Buffer.alloc(100)), RangeError);
  assert.deepEqual(read(Buffer.alloc(0)).chunks, []);
  assert.throws(() => parseHeader(Buffer.alloc(10), 10), RangeError);
});

test('the walker refuses hostile NBT without crashing: deep nesting, huge declared counts, trailing bytes', () => {
  // 600 nested lists of lists.
  const deep = Buffer.concat([Buffer.from([10, 0, 0, 9, 0, 1, 0x61]), ...Array.from({ length: 600 }, () => Buffer.from([9, 0, 0, 0, 1])), Buffer.from([0, 0, 0, 0])]);
  assert.throws(() => inhabitedTime(deep), ChunkUnreadable);
  const huge = Buffer.from([10, 0, 0, 11, 0, 1, 0x61, 0x7f, 0xff, 0xff, 0xff, 0]);
  assert.throws(() => inhabitedTime(huge), /ends early/);
  assert.throws(() => inhabitedTime(Buffer.concat([chunkNbt({ index: 0, inhabited: 1 }), Buffer.from([0])])), /after the root/);
  assert.throws(() => inflateChunk(Buffer.alloc(4), 'lz4'), /lz4/);
});

test('an unpruned compact rewrite keeps every stored chunk byte for byte, in fewer sectors, timestamps kept', () => {
  const r = regionFile(
    [
      { index: 3, inhabited: 1, compression: 'gzip', timestamp: 11 },
      { index: 900, inhabited: 2, compression: 'zlib', filler: 20000, timestamp: 22 },
      { index: 1, inhabited: 3, compression: 'none', timestamp: 33 },
      { index: 64, inhabited: 4, compression: 'zlib', external: true, timestamp: 44 },
    ],
    { gap: 3 },
  );
  const t = read(r.file, r.externals);
  const fd = fs.openSync(t.p, 'r');
  let out: Buffer;
  try {
    const kept = [...t.chunks].sort((a, b) => a.index - b.index);
    const { header } = compactHeader(kept.map((c: ChunkInfo) => ({ index: c.index, timestamp: c.timestamp, sectors: packedSectors(c) })));
    out = Buffer.concat([
      header,
      ...kept.map((c) => {
        const p = Buffer.alloc(packedSectors(c) * SECTOR);
        storedBytes(fd, c).copy(p);
        return p;
      }),
    ]);
  } finally {
    fs.closeSync(fd);
  }
  const back = read(out, r.externals);
  assert.ok(out.length < r.file.length);
  assert.equal(back.sectorsFree, 0);
  for (const c of back.chunks) {
    assert.deepEqual(out.subarray(c.offset * SECTOR, c.offset * SECTOR + 4 + c.bytes!), r.storedByIndex.get(c.index), `chunk ${c.index}`);
    assert.equal(c.error, undefined);
  }
  assert.deepEqual(
    back.chunks.map((c) => [c.index, c.timestamp, c.offset]),
    [
      [1, 33, 2],
      [3, 11, 3],
      [64, 44, 4],
      [900, 22, 5],
    ],
  );
});
