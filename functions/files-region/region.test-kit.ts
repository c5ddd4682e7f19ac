/**
 * Region files the tests and the bench make: each chunk's payload real NBT written by files-nbt's
 * encoder (a 1.18+ chunk with InhabitedTime at its root, or an older one under `Level`, with
 * sections, heightmaps and lists so a reader has to skip real tags), stored gzip, zlib, bare or
 * in an external `c.X.Z.mcc`, laid out as the game lays it: sectors with gaps, timestamps set.
 * @module
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import zlib from 'node:zlib';
import { encodeNbt } from '../files-nbt/nbt-encode.ts';
import { chunkCoords, HEADER_BYTES, SECTOR } from './job/region-format.ts';

export type KitCompression = 'gzip' | 'zlib' | 'none';

export interface KitChunk {
  /** The chunk's index in its region: (x & 31) + (z & 31) * 32. */
  index: number;
  inhabited: bigint | number;
  compression?: KitCompression;
  /** Stored in `c.X.Z.mcc` (the compression byte's 0x80). */
  external?: boolean;
  /** Before 1.18: InhabitedTime under `Level`. */
  legacy?: boolean;
  timestamp?: number;
  /** Bytes of filler (a byte array) to make the chunk span sectors. */
  filler?: number;
  /** A tag to tell the chunk's payload by. */
  mark?: string;
}

const long = (v: bigint | number) => ({ type: 'long', value: String(v) });
const int = (value: number) => ({ type: 'int', value });
const str = (value: string) => ({ type: 'string', value });

/** A chunk's NBT as the game writes it, cut down. */
export function chunkNbt(c: KitChunk, region = { x: 0, z: 0 }): Buffer {
  const at = chunkCoords(region, c.index);
  const body: Record<string, unknown> = {
    DataVersion: int(3953),
    xPos: int(at.x),
    zPos: int(at.z),
    Status: str('minecraft:full'),
    Heightmaps: { type: 'compound', value: { MOTION_BLOCKING: { type: 'longArray', value: Array.from({ length: 37 }, (_, i) => String(i * 1234567)) } } },
    sections: {
      type: 'list',
      value: {
        type: 'compound',
        value: [
          { Y: { type: 'byte', value: -4 }, block_states: { type: 'compound', value: { palette: { type: 'list', value: { type: 'compound', value: [{ Name: str('minecraft:stone') }] } } } } },
          { Y: { type: 'byte', value: -3 }, biomes: { type: 'compound', value: { palette: { type: 'list', value: { type: 'string', value: ['minecraft:plains'] } } } } },
        ],
      },
    },
    block_entities: { type: 'list', value: { type: 'end', value: [] } },
    ...(c.filler ? { Filler: { type: 'byteArray', value: Array.from({ length: c.filler }, (_, i) => ((i * 7919) % 256 > 127 ? ((i * 7919) % 256) - 256 : (i * 7919) % 256)) } } : {}),
    ...(c.mark ? { Mark: str(c.mark) } : {}),
    LastUpdate: long(99),
  };
  const root = c.legacy
    ? { type: 'compound', name: '', value: { DataVersion: int(2586), Level: { type: 'compound', value: { ...body, InhabitedTime: long(c.inhabited) } } } }
    : { type: 'compound', name: '', value: { ...body, InhabitedTime: long(c.inhabited) } };
  return encodeNbt(root);
}

export function compress(nbt: Buffer, how: KitCompression): Buffer {
  return how === 'gzip' ? zlib.gzipSync(nbt) : how === 'zlib' ? zlib.deflateSync(nbt) : nbt;
}
const TYPE = { gzip: 1, zlib: 2, none: 3 } as const;

/** A stored chunk: length, compression byte, data. */
export function stored(data: Buffer, type: number): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt32BE(data.length + 1, 0);
  head[4] = type;
  return Buffer.concat([head, data]);
}

export interface KitRegion {
  file: Buffer;
  /** `c.X.Z.mcc` name → bytes. */
  externals: Map<string, Buffer>;
  /** Each chunk's stored bytes (length field on), by index: what a rewrite must keep. */
  storedByIndex: Map<number, Buffer>;
}

/**
 * A region file of `chunks`, laid out in the order given with `gap` free sectors between them
 * (the game leaves holes); `raw` slots are written to the header as given (a hostile header).
 */
export function regionFile(chunks: KitChunk[], opts: { region?: { x: number; z: number }; gap?: number; raw?: { index: number; offset: number; sectors: number }[] } = {}): KitRegion {
  const region = opts.region ?? { x: 0, z: 0 };
  const header = Buffer.alloc(HEADER_BYTES);
  const parts: Buffer[] = [header];
  const externals = new Map<string, Buffer>();
  const storedByIndex = new Map<number, Buffer>();
  let at = 2;
  for (const c of chunks) {
    const how = c.compression ?? 'zlib';
    const data = compress(chunkNbt(c, region), how);
    let s: Buffer;
    if (c.external) {
      const xz = chunkCoords(region, c.index);
      externals.set(`c.${xz.x}.${xz.z}.mcc`, data);
      s = stored(Buffer.alloc(0), TYPE[how] | 0x80);
    } else s = stored(data, TYPE[how]);
    storedByIndex.set(c.index, s);
    const sectors = Math.ceil(s.length / SECTOR);
    const padded = Buffer.alloc(sectors * SECTOR);
    s.copy(padded);
    header.writeUInt32BE(((at << 8) | sectors) >>> 0, 4 * c.index);
    header.writeUInt32BE(c.timestamp ?? 1_700_000_000 + c.index, SECTOR + 4 * c.index);
    parts.push(padded);
    at += sectors;
    const gap = opts.gap ?? 0;
    if (gap > 0) {
      parts.push(Buffer.alloc(gap * SECTOR));
      at += gap;
    }
  }
  for (const r of opts.raw ?? []) header.writeUInt32BE(((r.offset << 8) | r.sectors) >>> 0, 4 * r.index);
  return { file: Buffer.concat(parts), externals, storedByIndex };
}

/** Writes a region file and its external chunk files into `folder` (made as needed). */
export function writeRegion(folder: string, name: string, r: KitRegion): string {
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, name), r.file);
  for (const [n, b] of r.externals) writeFileSync(join(folder, n), b);
  return join(folder, name);
}

/**
 * A world folder the prune tests use: `region/r.0.0.mca` with chunks of every compression (two
 * below 1000 ticks, one legacy), an external one below, and `entities/` and `poi/` files holding
 * the same places; `r.1.0.mca` wholly below (its trio goes); `r.0.1.mca` wholly above (unchanged).
 */
export function pruneWorld(world: string): { low: number[]; kept: number[] } {
  const main = regionFile(
    [
      { index: 0, inhabited: 10, compression: 'gzip', mark: 'low-gzip' },
      { index: 1, inhabited: 5000, compression: 'zlib', mark: 'high-zlib', filler: 9000 },
      { index: 33, inhabited: 0, compression: 'none', mark: 'low-none' },
      { index: 40, inhabited: 7000, compression: 'none', legacy: true, mark: 'high-legacy' },
      { index: 41, inhabited: 999, compression: 'zlib', legacy: true, mark: 'low-legacy' },
      { index: 1023, inhabited: 2n ** 60n, compression: 'gzip', mark: 'high-huge' },
      { index: 500, inhabited: 3, compression: 'zlib', external: true, mark: 'low-external' },
    ],
    { gap: 1 },
  );
  writeRegion(join(world, 'region'), 'r.0.0.mca', main);
  const side = (mark: string) => regionFile([0, 1, 33, 40, 41, 1023].map((index) => ({ index, inhabited: 0, compression: 'zlib' as const, mark: `${mark}-${index}` })));
  writeRegion(join(world, 'entities'), 'r.0.0.mca', side('entities'));
  writeRegion(join(world, 'poi'), 'r.0.0.mca', side('poi'));
  writeRegion(
    join(world, 'region'),
    'r.1.0.mca',
    regionFile(
      [
        { index: 2, inhabited: 1 },
        { index: 3, inhabited: 2, compression: 'gzip' },
      ],
      { region: { x: 1, z: 0 } },
    ),
  );
  writeRegion(join(world, 'entities'), 'r.1.0.mca', regionFile([{ index: 2, inhabited: 0 }], { region: { x: 1, z: 0 } }));
  writeRegion(join(world, 'region'), 'r.0.1.mca', regionFile([{ index: 7, inhabited: 1_000_000 }], { region: { x: 0, z: 1 } }));
  return { low: [0, 33, 41, 500], kept: [1, 40, 1023] };
}

/**
 * The bench's world: `regions` region files of `chunks` chunks each (zlib), every other one below
 * 1000 ticks, each with entities/ and poi/ files of the same chunks. Returns the bytes written.
 */
export function pruneWorldOf(world: string, regions: number, chunks: number): number {
  let bytes = 0;
  for (let r = 0; r < regions; r++) {
    const region = { x: r, z: 0 };
    const name = `r.${r}.0.mca`;
    const main = regionFile(
      Array.from({ length: Math.min(chunks, 1024) }, (_, index) => ({ index, inhabited: index % 2 === 0 ? 10 : 50_000, filler: 2000 })),
      { region },
    );
    const side = regionFile(
      Array.from({ length: Math.min(chunks, 1024) }, (_, index) => ({ index, inhabited: 0 })),
      { region },
    );
    writeRegion(join(world, 'region'), name, main);
    writeRegion(join(world, 'entities'), name, side);
    writeRegion(join(world, 'poi'), name, side);
    bytes += main.file.length + 2 * side.file.length;
  }
  return bytes;
}
