/**
 * The extraction plan, in bounded memory whatever the entry count.
 *
 * Pass 1 reads the entries one at a time (a zip's central directory, or a tar's headers, its data
 * skipped), judges each entry (the first refusal in
 * archive order wins), sums the declared sizes, and spills two kinds of records to external sorters
 * in the working folder: `name NUL kind` for every file, folder and implied parent folder, and
 * `start end name` for every entry's byte range in the archive. The merge then walks both in
 * sorted order: equal names are adjacent, so a file named twice, or a name that is both a file and
 * a folder, shows up as a group; overlapping byte ranges show up as a start below the furthest end
 * seen so far. Each distinct name is handed, in sorted order, to a visitor (the target check).
 *
 * @module
 */
import type { Result } from '../../lib/protocol/result.ts';
import { ExternalSorter } from '../listing/external-sort.ts';
import { fail } from '../volume/failure.ts';
import { dir } from '../volume/pathutil.ts';
import { decodeName, judgeEntry } from './names.ts';
import type { ArchivePass } from './pass.ts';

export const KIND_DIR = 0x44; // 'D'
export const KIND_FILE = 0x46; // 'F'
/** A local file header is at least this long before the data. */
const LOCAL_HEADER_MIN = 30;

export interface PlanSummary {
  files: number;
  /** Distinct folders, the implied parents included. */
  dirs: number;
  /** Sum of the files' declared sizes. */
  bytes: number;
}

export type Visitor = (name: string, kind: 'file' | 'dir') => void;

function nameRecord(name: string, kind: number): Buffer {
  const n = Buffer.from(name, 'utf8');
  const rec = Buffer.allocUnsafe(n.length + 2);
  n.copy(rec, 0);
  rec[n.length] = 0;
  rec[n.length + 1] = kind;
  return rec;
}

/** A safe integer as 8 big-endian bytes (two 32-bit halves: no BigInt per record), so byte order is numeric order. */
function writeU64(buf: Buffer, n: number, at: number): void {
  buf.writeUInt32BE(Math.floor(n / 0x1_0000_0000), at);
  buf.writeUInt32BE(n >>> 0, at + 4);
}

function readU64(buf: Buffer, at: number): number {
  return buf.readUInt32BE(at) * 0x1_0000_0000 + buf.readUInt32BE(at + 4);
}

function rangeRecord(start: number, end: number, rawName: Buffer): Buffer {
  const rec = Buffer.allocUnsafe(16 + rawName.length);
  writeU64(rec, start, 0);
  writeU64(rec, end, 8);
  rawName.copy(rec, 16);
  return rec;
}

const damaged = (entry: string, why: string) => fail('archive_invalid', `${entry} in the archive is damaged: ${why}; nothing was changed`);

/**
 * Pass 1 and the merge. Returns the summary, or the refusal: a per-entry one (first in archive
 * order; `pathMax` the longest path an entry may have where it lands, names.ts `entryPathMax`),
 * else a duplicate, a file/folder clash, an empty archive or overlapping entries. The visitor sees
 * every distinct name even when the archive is refused after the merge; the caller prefers the
 * archive's refusal over anything the visitor found.
 */
export async function planArchive(pass: ArchivePass, workDir: string, visit: Visitor, pathMax: number, chunkBytes?: number): Promise<PlanSummary | Result> {
  const names = new ExternalSorter(workDir, 'names', chunkBytes);
  const ranges = new ExternalSorter(workDir, 'ranges', chunkBytes);
  let bytes = 0;
  let lastParent = '.';
  const addParents = (parent: string) => {
    // Entries come grouped by folder in practice: a folder's chain is spilled once per run of it.
    if (parent === lastParent) return;
    lastParent = parent;
    for (let p = parent; p !== '.'; p = dir(p)) names.add(nameRecord(p, KIND_DIR));
  };
  for (let e = await pass.next(); e !== null; e = await pass.next()) {
    const entryName = () => decodeName(e!.rawName).replaceAll('\\', '/');
    if (!Number.isSafeInteger(e.compressedSize) || !Number.isSafeInteger(e.localHeaderOffset)) {
      return { ...fail('archive_invalid', `${entryName()} has an impossible size or offset in the archive`), entry: entryName() };
    }
    // Only a zip's entries point at their data, so only they can share it (a tar's follow each other).
    if (e.localHeaderOffset >= 0) ranges.add(rangeRecord(e.localHeaderOffset, e.localHeaderOffset + LOCAL_HEADER_MIN + e.compressedSize, e.rawName));
    const j = judgeEntry(e.rawName, e.versionMadeBy, e.externalAttributes, e.typed, pathMax);
    if (j.action === 'refuse') return { code: j.code, error: j.error, entry: j.entry };
    if (j.action === 'skip') continue;
    if (j.action === 'dir') {
      names.add(nameRecord(j.name, KIND_DIR));
      addParents(dir(j.name));
      continue;
    }
    if (!Number.isSafeInteger(e.uncompressedSize) || !Number.isSafeInteger(bytes + e.uncompressedSize)) {
      return { ...fail('archive_invalid', `${entryName()} declares an impossible size`), entry: entryName() };
    }
    if (!e.canDecode) {
      return { ...damaged(entryName(), 'it is encrypted or uses an unsupported compression method'), entry: entryName() };
    }
    bytes += e.uncompressedSize;
    names.add(nameRecord(j.name, KIND_FILE));
    addParents(dir(j.name));
  }

  let files = 0;
  let dirs = 0;
  let duplicate: string | undefined;
  let clash: string | undefined;
  let groupName: Buffer | undefined;
  let groupFiles = 0;
  let groupDirs = 0;
  const closeGroup = () => {
    if (!groupName) return;
    const name = groupName.toString('utf8');
    if (groupFiles > 1 && duplicate === undefined) duplicate = name;
    if (groupFiles > 0 && groupDirs > 0 && clash === undefined) clash = name;
    if (groupFiles > 0) files++;
    else dirs++;
    visit(name, groupFiles > 0 ? 'file' : 'dir');
  };
  for (const rec of names.sorted()) {
    const name = rec.subarray(0, rec.length - 2);
    if (!groupName?.equals(name)) {
      closeGroup();
      groupName = name;
      groupFiles = 0;
      groupDirs = 0;
    }
    if (rec[rec.length - 1] === KIND_FILE) groupFiles++;
    else groupDirs++;
  }
  closeGroup();

  if (duplicate !== undefined) return { ...fail('archive_invalid', `${duplicate} appears in the archive twice`), entry: duplicate };
  if (clash !== undefined) return { ...fail('archive_invalid', `${clash} is both a file and a folder in the archive`), entry: clash };
  if (files === 0 && dirs === 0) return fail('archive_invalid', 'the archive has nothing to extract');

  let furthest = -1;
  for (const rec of ranges.sorted()) {
    const start = readU64(rec, 0);
    const end = readU64(rec, 8);
    if (start < furthest) {
      const entry = decodeName(rec.subarray(16)).replaceAll('\\', '/');
      // Leaving the loop returns the generator, which closes and removes its run files.
      return { ...fail('archive_invalid', `${entry} overlaps another entry's data in the archive`), entry };
    }
    furthest = Math.max(furthest, end);
  }
  return { files, dirs, bytes };
}

export function isRefusal(x: PlanSummary | Result): x is Result {
  return (x as Result).code !== undefined;
}
