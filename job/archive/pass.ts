/**
 * What the plan and the extractor need from one pass over an archive, whatever its format: the
 * entries in archive order, each with its raw name bytes, what its header says it is, its declared
 * size, and its data read in order. A zip pass (`ZipPass`) and a tar pass (`TarPass`) satisfy it.
 *
 * @module
 */
import type { Readable } from 'node:stream';
import type { Typed } from './names.ts';

export interface ArchiveEntry {
  /** The undecoded name. */
  rawName: Buffer;
  /** Zip's "version made by" and external attributes (judged when `typed` is absent). */
  versionMadeBy: number;
  externalAttributes: number;
  /** Kind and permission bits when the format states them itself (tar). */
  typed: Typed | undefined;
  /** Bytes the entry's data takes in the archive, and where its header starts (-1: no range to check). */
  compressedSize: number;
  localHeaderOffset: number;
  /** The size the entry declares: exactly this many bytes must come out of it. */
  uncompressedSize: number;
  /** The CRC-32 the entry declares, or undefined when the format has none (tar). */
  crc32: number | undefined;
  /** False for an encrypted entry or an unknown compression method. */
  canDecode: boolean;
}

export interface ArchivePass<E extends ArchiveEntry = ArchiveEntry> {
  /** The next entry, or null after the last one. Rejects with ArchiveReadError when the archive is damaged. */
  next(): Promise<E | null>;
  /** The whole data of a small entry in one buffer, or null: read it with openData. */
  readSmall(e: E): Buffer | null;
  /** The entry's data, unchecked (the extractor counts it against the declared size). Only the current entry's. */
  openData(e: E): Promise<Readable | AsyncIterable<Buffer>>;
  /** Ends the pass and releases what it holds. */
  close(): void;
}
