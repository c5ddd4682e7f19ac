/**
 * region(path): one region file's chunk table (region-io.ts), opened as a read opens a file (links
 * inside the world followed, the withheld file refused). A name that is not `r.<int>.<int>.mca`
 * and a file too short for a header are `region_invalid`; a corrupt slot or chunk is reported on
 * the chunk. External chunks are read from `c.X.Z.mcc` in the region file's folder.
 * @module
 */
import fs from 'node:fs';
import { openReadable } from '../../../job/op-kit/open-readable.ts';
import type { OpContext, OpRequestOf } from '../../../job/runtime/types.ts';
import { failure } from '../../../job/volume/failure.ts';
import { dir, join } from '../../../job/volume/pathutil.ts';
import type { Result } from '../../../lib/protocol/result.ts';
import type { RegionChunk, RegionReport } from '../op.ts';
import { regionCoords } from './region-format.ts';
import { type ChunkInfo, type ExternalReader, externalReader, readRegion } from './region-io.ts';

const { O_RDONLY, O_NONBLOCK } = fs.constants;

/** A long as JSON carries it exactly: a number within ±(2^53-1), else its decimal string. */
export function ticksJson(v: bigint): number | string {
  return v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= -BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v.toString();
}

export function chunkJson(c: ChunkInfo): RegionChunk {
  return {
    x: c.x,
    z: c.z,
    sectors: c.sectors,
    bytes: c.bytes,
    timestamp: c.timestamp,
    compression: c.compression,
    external: c.external,
    inhabited_ticks: c.inhabited === null ? null : ticksJson(c.inhabited),
    ...(c.error !== undefined ? { error: c.error } : {}),
  };
}

/** The refusal of a file that is no region file, naming the caller's path. */
export function regionInvalid(name: string, why: string): Result {
  return { code: 'region_invalid', error: `${name} cannot be read as a region file: ${why}` };
}

/** Reads `c.X.Z.mcc` in `folder` inside the world (links inside followed, as the region file's own open). */
export function externalIn(ctx: OpContext, folder: string): ExternalReader {
  return externalReader((file) => ctx.root.openFile(join(folder, file), O_RDONLY | O_NONBLOCK));
}

export function region(ctx: OpContext, req: OpRequestOf<'region'>): Result {
  const name = req.path;
  const coords = regionCoords(name.slice(name.lastIndexOf('/') + 1));
  if (!coords) return regionInvalid(name, 'its name must be r.<x>.<z>.mca, x and z whole numbers');
  const opened = openReadable(ctx, name);
  if (!('fd' in opened)) return opened;
  const { fd, st } = opened;
  try {
    let read: ReturnType<typeof readRegion>;
    try {
      read = readRegion(fd, Number(st.size), coords, externalIn(ctx, dir(name)), true);
    } catch (e) {
      if (e instanceof RangeError) return regionInvalid(name, e.message);
      return failure(name, e, 'read');
    }
    const report: RegionReport = { path: name, chunks: read.chunks.map(chunkJson), sectors_used: read.sectorsUsed, sectors_free: read.sectorsFree };
    return { report };
  } finally {
    fs.closeSync(fd);
  }
}

export const runs = { region };
