/**
 * The Anvil region format (`r.X.Z.mca`), pure: the 8 KiB header read and judged, one chunk's stored
 * bytes told apart, a compact file's header planned. A header is hostile: a slot that starts inside
 * the header, runs past the file's end or shares a sector with another is corrupt (reported, its
 * bytes never read), and a chunk whose length field exceeds its sectors is corrupt too. Nothing
 * here reads a file; region-io.ts does, a bounded piece at a time. The layout: docs/world-tools.md,
 * "Region files".
 * @module
 */

/** A region file's unit: its header is two of them (1024 locations, then 1024 timestamps). */
export const SECTOR = 4096;
export const HEADER_BYTES = 2 * SECTOR;
export const CHUNKS = 1024;
/** A location's sector count is one byte: a chunk stored inline is at most this many sectors (≈ 1 MiB). */
export const MAX_CHUNK_SECTORS = 255;
/** The external-payload bit of the compression byte: the chunk is in `c.X.Z.mcc` beside the file. */
export const EXTERNAL = 0x80;

/** `r.<int>.<int>.mca`, its coordinates; null for any other name. */
export function regionCoords(name: string): { x: number; z: number } | null {
  const m = /^r\.(-?\d{1,7})\.(-?\d{1,7})\.mca$/.exec(name);
  if (!m) return null;
  return { x: Number(m[1]), z: Number(m[2]) };
}

/** A chunk's world coordinates from its region's and its index (i = (x & 31) + (z & 31) * 32). */
export function chunkCoords(region: { x: number; z: number }, i: number): { x: number; z: number } {
  return { x: region.x * 32 + (i & 31), z: region.z * 32 + (i >> 5) };
}

/** One used slot of the header. */
export interface Slot {
  index: number;
  /** First sector, and how many the header gives it. */
  offset: number;
  sectors: number;
  timestamp: number;
  /** Why its bytes cannot be trusted (it starts in the header, runs past the end, overlaps); absent when sound. */
  error?: string;
}

/**
 * The used slots of a header, in index order, each judged against the file's size and the others.
 * An empty slot (offset and count 0) is none; a slot with one of them 0 is corrupt.
 */
export function parseHeader(header: Buffer, fileSize: number): Slot[] {
  if (header.length < HEADER_BYTES) throw new RangeError(`a region header is ${HEADER_BYTES} bytes, not ${header.length}`);
  const fileSectors = Math.ceil(fileSize / SECTOR);
  const slots: Slot[] = [];
  for (let i = 0; i < CHUNKS; i++) {
    const loc = header.readUInt32BE(4 * i);
    if (loc === 0) continue;
    const offset = loc >>> 8;
    const sectors = loc & 0xff;
    const timestamp = header.readUInt32BE(SECTOR + 4 * i);
    const s: Slot = { index: i, offset, sectors, timestamp };
    if (sectors === 0) s.error = `its location gives sector ${offset} but no sectors`;
    else if (offset < 2) s.error = `it starts at sector ${offset}, inside the header`;
    else if (offset + sectors > fileSectors) s.error = `its sectors ${offset}–${offset + sectors - 1} run past the file's end (${fileSectors} sectors)`;
    slots.push(s);
  }
  // Overlaps: sorted by offset, a slot that starts before the previous sound one ends is corrupt, and so is that one.
  const sound = slots.filter((s) => !s.error).sort((a, b) => a.offset - b.offset || a.index - b.index);
  let prev: Slot | undefined;
  for (const s of sound) {
    if (prev && s.offset < prev.offset + prev.sectors) {
      s.error = `its sectors overlap those of chunk index ${prev.index}`;
      prev.error ??= `its sectors overlap those of chunk index ${s.index}`;
      if (s.offset + s.sectors <= prev.offset + prev.sectors) continue; // prev reaches further: it stays the one to compare
    }
    prev = s;
  }
  return slots;
}

/** Sectors in use (the header's two and every sound slot's) and free ones, of a file of `fileSize` bytes. */
export function sectorUse(slots: readonly Slot[], fileSize: number): { used: number; free: number } {
  const total = Math.max(2, Math.ceil(fileSize / SECTOR));
  let used = 2;
  for (const s of slots) if (!s.error) used += s.sectors;
  return { used: Math.min(used, total), free: Math.max(0, total - used) };
}

/** A chunk's stored head: the length field (bytes after it, the compression byte included) and the compression byte. */
export interface ChunkHead {
  length: number;
  compression: number;
}

/** The head of a slot's first bytes, or why it is corrupt (a length beyond its sectors, none at all). */
export function judgeHead(slot: Slot, first5: Buffer): ChunkHead | { error: string } {
  if (first5.length < 5) return { error: 'its sectors end before its length and compression' };
  const length = first5.readUInt32BE(0);
  const compression = first5[4]!;
  if (length < 1) return { error: 'its length is 0' };
  if (length + 4 > slot.sectors * SECTOR) return { error: `its length ${length} exceeds its ${slot.sectors} sectors` };
  return { length, compression };
}

/** What a compression byte means (the external bit apart): 1 gzip, 2 zlib, 3 none, 4 lz4, 127 custom. */
export type Compression = 'gzip' | 'zlib' | 'none' | 'lz4' | 'custom' | 'unknown';
export function compressionName(byte: number): Compression {
  const t = byte & ~EXTERNAL;
  return t === 1 ? 'gzip' : t === 2 ? 'zlib' : t === 3 ? 'none' : t === 4 ? 'lz4' : t === 127 ? 'custom' : 'unknown';
}

/** The sectors a chunk of this stored length takes when packed (its 4-byte length field included). */
export function sectorsFor(length: number): number {
  return Math.ceil((length + 4) / SECTOR);
}

/** One chunk of a rewritten file: its index, its timestamp, and how many sectors its bytes take. */
export interface Packed {
  index: number;
  timestamp: number;
  sectors: number;
}

/**
 * The header of a compact file holding `kept` in this order from sector 2: each chunk right after
 * the one before, the timestamps kept. Returns the header and where each chunk starts.
 */
export function compactHeader(kept: readonly Packed[]): { header: Buffer; offsets: number[] } {
  const header = Buffer.alloc(HEADER_BYTES);
  const offsets: number[] = [];
  let at = 2;
  for (const k of kept) {
    if (k.sectors < 1 || k.sectors > MAX_CHUNK_SECTORS) throw new RangeError(`chunk index ${k.index} takes ${k.sectors} sectors`);
    header.writeUInt32BE(((at << 8) | k.sectors) >>> 0, 4 * k.index);
    header.writeUInt32BE(k.timestamp >>> 0, SECTOR + 4 * k.index);
    offsets.push(at);
    at += k.sectors;
  }
  return { header, offsets };
}
