/**
 * The decoded size a compressed file states before any of it is decoded: a zstd frame header's
 * content size, an xz stream's index. A file stating more than the volume can take is refused at
 * once (`no_space`), rather than after decoding up to the free space into the working folder. A
 * statement is only a claim: the streaming check on the decoded bytes still holds whatever it says,
 * so a file that states nothing (or lies low) is stopped the same way as before.
 *
 * @module
 */
import fs from 'node:fs';
import { parseFileIndex } from 'node-liblzma/wasm';

const ZSTD_MAGIC = 0xfd2fb528;
/** An xz stream header or footer. */
const XZ_EDGE = 12;
/** A larger index is not read for the early check (the streaming check still applies). */
const XZ_INDEX_MAX = 1 << 20;

/**
 * The content size a zstd frame header states (`head`: the frame's first bytes, at least 18), or
 * undefined when the frame does not state it.
 */
export function zstdContentSize(head: Buffer): number | undefined {
  if (head.length < 5 || head.readUInt32LE(0) !== ZSTD_MAGIC) return undefined;
  const fhd = head[4]!;
  const singleSegment = (fhd >> 5) & 1;
  const fcsBytes = [singleSegment ? 1 : 0, 2, 4, 8][fhd >> 6]!;
  if (fcsBytes === 0) return undefined;
  const at = 5 + (singleSegment ? 0 : 1) + [0, 1, 2, 4][fhd & 3]!;
  if (head.length < at + fcsBytes) return undefined;
  switch (fcsBytes) {
    case 1:
      return head[at]!;
    case 2:
      return head.readUInt16LE(at) + 256; // the 2-byte field is stored less 256
    case 4:
      return head.readUInt32LE(at);
    default:
      return Number(head.readBigUInt64LE(at));
  }
}

/** What the first zstd frame of the file `fd` holds states; a lower bound for a file of several frames. */
export function zstdStatedSize(fd: number): number | undefined {
  const head = Buffer.alloc(18);
  return zstdContentSize(head.subarray(0, fs.readSync(fd, head, 0, head.length, 0)));
}

/**
 * What the xz file `fd` holds states in its last stream's index (a lower bound for concatenated
 * streams), or undefined when it cannot be read cheaply (stream padding, a huge index, damage).
 */
export function xzStatedSize(fd: number): number | undefined {
  const size = fs.fstatSync(fd).size;
  if (size < 2 * XZ_EDGE) return undefined;
  const footer = Buffer.alloc(XZ_EDGE);
  fs.readSync(fd, footer, 0, XZ_EDGE, size - XZ_EDGE);
  if (footer[10] !== 0x59 || footer[11] !== 0x5a) return undefined; // 'YZ': no footer last
  const backward = (footer.readUInt32LE(4) + 1) * 4;
  if (backward > XZ_INDEX_MAX || backward > size - 2 * XZ_EDGE) return undefined;
  // parseFileIndex reads a whole file's header, index and footer: those parts, without the blocks.
  const parts = Buffer.alloc(XZ_EDGE + backward + XZ_EDGE);
  fs.readSync(fd, parts, 0, XZ_EDGE, 0);
  fs.readSync(fd, parts, XZ_EDGE, backward + XZ_EDGE, size - XZ_EDGE - backward);
  try {
    const n = parseFileIndex(parts).uncompressedSize;
    return Number.isSafeInteger(n) && n >= 0 ? n : undefined;
  } catch {
    return undefined;
  }
}
