/**
 * A region file read from its descriptor a bounded piece at a time: the header, then each sound
 * slot's first 5 bytes, then (only when its InhabitedTime is asked for) its stored bytes, at most
 * 255 sectors, or its external `c.X.Z.mcc` up to EXTERNAL_MAX_BYTES. A corrupt slot or chunk is
 * reported on the chunk and never read further; nothing a file holds can crash the read or make it
 * allocate more than those bounds.
 * @module
 */
import fs from 'node:fs';
import { readCapped } from '../../../job/volume/read-capped.ts';
import { ChunkUnreadable, inflateChunk, inhabitedTime } from './chunk-nbt.ts';
import { type Compression, chunkCoords, compressionName, EXTERNAL, HEADER_BYTES, judgeHead, parseHeader, SECTOR, type Slot, sectorsFor, sectorUse } from './region-format.ts';

/** The largest external chunk file read (`c.X.Z.mcc`): beyond, the chunk is unreadable (kept). */
export const EXTERNAL_MAX_BYTES = 16 << 20;

/** Reads a `c.X.Z.mcc` beside the region file: its bytes (at most `max + 1`), null when there is none. */
export type ExternalReader = (name: string, max: number) => Buffer | null;

/**
 * The reader of `c.X.Z.mcc` files that `open` opens (each caller says how: inside the world, or
 * by bare name below a folder's fd): null when there is none or it is no regular file, else at
 * most `max + 1` bytes, so a longer one shows as too long without being read whole.
 */
export function externalReader(open: (name: string) => number): ExternalReader {
  return (name, max) => {
    let fd: number;
    try {
      fd = open(name);
    } catch {
      return null;
    }
    try {
      if (!fs.fstatSync(fd).isFile()) return null;
      return readCapped(fd, max + 1);
    } finally {
      fs.closeSync(fd);
    }
  };
}

/** One chunk as the table and the prune see it. */
export interface ChunkInfo {
  index: number;
  x: number;
  z: number;
  /** Its first sector, as the header gives it. */
  offset: number;
  /** Sectors the header gives it. */
  sectors: number;
  /** Its stored length (the length field); null when the slot is corrupt. */
  bytes: number | null;
  timestamp: number;
  compression: Compression | null;
  external: boolean;
  /** Asked for and readable; else null with `error`. */
  inhabited: bigint | null;
  error?: string;
  /** The slot itself cannot be trusted (outside the file, in the header, overlapping): its bytes cannot even be copied. */
  corruptSlot: boolean;
}

export interface RegionRead {
  chunks: ChunkInfo[];
  sectorsUsed: number;
  sectorsFree: number;
}

/** A header that is no region header: the file is not empty yet shorter than one. */
export class RegionInvalid extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RegionInvalid';
  }
}

function readAt(fd: number, pos: number, n: number): Buffer {
  const b = Buffer.alloc(n);
  let got = 0;
  while (got < n) {
    const r = fs.readSync(fd, b, got, n - got, pos + got);
    if (r === 0) break;
    got += r;
  }
  return got === n ? b : b.subarray(0, got);
}

/** The header (a 0-byte file has none: no chunks, as the game creates them). */
export function readHeader(fd: number, size: number): Slot[] {
  if (size === 0) return [];
  if (size < HEADER_BYTES) throw new RangeError(`it is ${size} bytes, shorter than a region header (${HEADER_BYTES})`);
  const h = readAt(fd, 0, HEADER_BYTES);
  if (h.length < HEADER_BYTES) throw new RangeError('it ended while its header was read');
  return parseHeader(h, size);
}

/**
 * A slot's stored bytes: its length field and compression byte and what follows, exactly
 * `4 + length` bytes (the whole slot's sectors when the head is corrupt, so a copy keeps them).
 */
export function storedBytes(fd: number, c: ChunkInfo): Buffer {
  return readAt(fd, c.offset * SECTOR, c.bytes !== null ? 4 + c.bytes : c.sectors * SECTOR);
}

/** The sectors a chunk takes once packed: its stored bytes', or all of its slot's when its head is corrupt (copied as they are). */
export function packedSectors(c: ChunkInfo): number {
  return c.bytes !== null ? sectorsFor(c.bytes) : c.sectors;
}

/** Every used slot of the file, in index order; `inhabited` read when `withInhabited`. Throws RangeError for a file that has no region header. */
export function readRegion(fd: number, size: number, region: { x: number; z: number }, external: ExternalReader, withInhabited: boolean): RegionRead {
  const slots = readHeader(fd, size);
  const chunks: ChunkInfo[] = [];
  for (const s of slots) {
    const at = chunkCoords(region, s.index);
    const c: ChunkInfo = {
      index: s.index,
      x: at.x,
      z: at.z,
      offset: s.offset,
      sectors: s.sectors,
      bytes: null,
      timestamp: s.timestamp,
      compression: null,
      external: false,
      inhabited: null,
      corruptSlot: false,
    };
    chunks.push(c);
    if (s.error) {
      c.error = s.error;
      c.corruptSlot = true;
      continue;
    }
    const head = judgeHead(s, readAt(fd, s.offset * SECTOR, 5));
    if ('error' in head) {
      c.error = head.error;
      continue;
    }
    c.bytes = head.length;
    c.compression = compressionName(head.compression);
    c.external = (head.compression & EXTERNAL) !== 0;
    if (!withInhabited) continue;
    try {
      let data: Buffer;
      if (c.external) {
        const name = `c.${at.x}.${at.z}.mcc`;
        const ext = external(name, EXTERNAL_MAX_BYTES);
        if (ext === null) throw new ChunkUnreadable(`its external file ${name} is missing`);
        if (ext.length > EXTERNAL_MAX_BYTES) throw new ChunkUnreadable(`its external file ${name} is more than ${EXTERNAL_MAX_BYTES} bytes`);
        data = ext;
      } else data = readAt(fd, s.offset * SECTOR + 5, head.length - 1);
      c.inhabited = inhabitedTime(inflateChunk(data, c.compression));
    } catch (e) {
      if (!(e instanceof ChunkUnreadable)) throw e;
      c.error = e.message;
    }
  }
  const use = sectorUse(slots, size);
  return { chunks, sectorsUsed: use.used, sectorsFree: use.free };
}
