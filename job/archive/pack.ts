/**
 * The zip packer: one file or folder of the world streamed into a zip, in bounded memory (one file
 * read at a time through our zip writer, which writes sizes and CRCs in data descriptors, so
 * nothing is buffered whole, and spills the central directory). The download rules apply: the walk never follows links (links and special files
 * are skipped), the forwarding secret is withheld by identity, the root server.properties (by
 * identity, so also a hard link to it) is packed redacted, or withheld when over 1 MiB, since it
 * could not be redacted in memory. Entries are named under the source's own base name
 * (`plugins/...`); folders carry their mode and time. Each file is re-checked once open: its `fstat`
 * identity (device, inode, change time, a regular file) must be what the walk's `lstat` planned with, else the
 * entry is skipped (swapped since the walk saw it).
 *
 * `packToStream` writes to any Writable, so a download can stream the same archive to an HTTP
 * response; `zip` (functions/files-zip/job/zip.ts) lands it in the world. `packSources` is the same walk over several
 * sources into any `EntrySink` (the zip writer, or the tar packer of functions/files-compress/job/compress.ts).
 *
 * @module
 */

import { once } from 'node:events';
import fs from 'node:fs';
import type { Writable } from 'node:stream';
import type { Result } from '../../lib/protocol/result.ts';
import { MAX_READ_BYTES } from '../runtime/types.ts';
import { withheldRule } from '../runtime/withheld.ts';
import { isWorkingName } from '../runtime/working-files.ts';
import { type PackInput, packedRoom } from '../trash/room.ts';
import { fail, failure } from '../volume/failure.ts';
import { propertiesIdentity, redactProperties } from '../volume/guard.ts';
import { clean, leadsOutside } from '../volume/pathutil.ts';
import { readCapped } from '../volume/read-capped.ts';
import { errCode, fdPath, type Identity, identityOf, sameIdentity, type WorldRoot } from '../volume/root.ts';
import { isWorkFolderName } from '../volume/work-folder.ts';
import { type EntryMeta, MemorySpill, type Spill, ZipWriter } from './zip-writer.ts';

const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK, O_DIRECTORY } = fs.constants;
/** Files smaller than this are read synchronously in one go. */
const SYNC_READ_BELOW = 64 << 10;
/** The most one read of a file takes. */
const READ_CHUNK = 256 << 10;
/** Deflate at best speed: worlds are mostly already-compressed region files. */
const LEVEL = 1;
/**
 * Files stored as they are: small ones (each deflate stream leaves a 16 KiB output buffer for the
 * GC, which for tens of thousands of small files piled up to hundreds of MiB before V8 collected
 * it; small files gain little), and formats that are compressed already (region files, gzipped
 * NBT, jars and archives, images and sounds), where deflate only costs time.
 */
const STORE_BELOW = 64 << 10;
const COMPRESSED = /\.(mca|mcr|mcc|dat|dat_old|jar|zip|gz|tgz|xz|bz2|zst|7z|png|jpg|jpeg|ogg|mp3|webp)$/i;

export function compressionLevelFor(name: string, size: number): number {
  return size < STORE_BELOW || COMPRESSED.test(name) ? 0 : LEVEL;
}

export interface PackStats {
  /** Files packed (redacted ones included). */
  files: number;
  dirs: number;
  /** Links and special files left out. */
  skipped: number;
  /** Guarded files left out. */
  withheld: number;
  /** Bytes of file content read from the world. */
  bytesRead: number;
}

/** A source that can be packed: its root-relative name, kind, and the entry name it starts at. */
export interface Source {
  name: string;
  isDir: boolean;
  base: string;
}

/**
 * Checks a source path: a file or folder inside the world, not the root, reached through links
 * that stay inside. Returns the source or the refusal.
 */
export function resolveSource(root: WorldRoot, path: string): Source | Result {
  const name = clean(path);
  if (name === '.' || name.startsWith('/') || leadsOutside(name)) {
    return fail('bad_path', `${path === '' ? '.' : path} is not a file or folder inside the world`);
  }
  let st: fs.BigIntStats;
  try {
    st = root.stat(name);
  } catch (e) {
    return failure(name, e, 'stat');
  }
  if (!st.isDirectory() && !st.isFile()) return fail('bad_path', `${name} is not a regular file`);
  // A link leading back to the root is the root under another name.
  if (sameIdentity(identityOf(st), root.identity('.', false))) {
    return fail('bad_path', `${path} is not a file or folder inside the world`);
  }
  if (st.isFile() && (withheldRule(root).isIdentity(identityOf(st)) || withheldRule(root).judgePath(root, name))) {
    return fail('bad_path', `${name} holds the proxy forwarding secret; it is never packed`);
  }
  return { name, isDir: st.isDirectory(), base: name.slice(name.lastIndexOf('/') + 1) };
}

interface Item {
  kind: 'dir' | 'file' | 'skip';
  /** Entry name in the archive. */
  entry: string;
  st: fs.BigIntStats;
  /** Opens the file for reading; call it before the walk moves on (it needs the walk's folder). */
  open: () => number;
}

/**
 * Walks a folder without following links, in directory order, one folder open per level.
 * Working files of the editor and working folders of an extraction are not the world's: left out.
 *
 * The walk works from inside the folder it reads (`process.chdir` to the folder's fd, which the
 * kernel resolves to the open folder itself, never by its name again), so each entry is looked at
 * and opened by its own one-component name: a path through /proc/self/fd costs a procfs lookup per
 * call, which was more than half of each lstat and open. The working folder is set again after each
 * subfolder (nothing else in a Job changes it), so an `open` called before the walk moves on opens
 * the entry of the folder it was listed in; the caller restores the process's own (`inWorld`).
 */
function* walk(dirFd: number, prefix: string): Generator<Item> {
  const here = fdPath(dirFd);
  process.chdir(here);
  const d = fs.opendirSync('.');
  try {
    for (let ent = d.readSync(); ent; ent = d.readSync()) {
      const name = ent.name;
      if (isWorkingName(name) || isWorkFolderName(name)) continue;
      let st: fs.BigIntStats;
      try {
        st = fs.lstatSync(name, { bigint: true });
      } catch {
        continue; // gone since the listing
      }
      const entry = `${prefix}/${name}`;
      if (st.isDirectory()) {
        yield { kind: 'dir', entry, st, open: openNone };
        let fd: number;
        try {
          fd = fs.openSync(name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
        } catch (e) {
          // Swapped for a link or a file, or gone, since its lstat: not descended into.
          const code = errCode(e);
          if (code === 'ELOOP' || code === 'ENOTDIR' || code === 'ENOENT') continue;
          throw e;
        }
        try {
          // The folder opened must be the one planned, or a swap could lead the walk elsewhere.
          if (sameIdentity(identityOf(fs.fstatSync(fd, { bigint: true })), identityOf(st))) yield* walk(fd, entry);
        } finally {
          fs.closeSync(fd);
        }
        process.chdir(here);
      } else {
        yield { kind: st.isFile() ? 'file' : 'skip', entry, st, open: () => fs.openSync(name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK) };
      }
    }
  } finally {
    d.closeSync();
  }
}

function openNone(): number {
  return -1;
}

/** Runs `f` (a walk) and then returns the process to its own working folder. */
async function inWorld<T>(f: () => Promise<T>): Promise<T> {
  let previous: string;
  try {
    previous = process.cwd();
  } catch {
    previous = '/'; // the old working folder is gone: any existing one will do afterwards
  }
  try {
    return await f();
  } finally {
    process.chdir(previous);
  }
}

/** Every item of a source: the folder itself and its tree, or the one file. */
function* items(root: WorldRoot, src: Source): Generator<Item> {
  const flags = src.isDir ? O_RDONLY | O_DIRECTORY : O_RDONLY | O_NONBLOCK;
  const fd = root.openFile(src.name, flags, 'open', src.isDir);
  try {
    const st = fs.fstatSync(fd, { bigint: true });
    // A folder entry of its own (`plugins/`) then its tree; a file by its own name.
    if (!src.isDir) {
      if (!st.isFile()) return; // swapped for something else since it was checked
      yield { kind: 'file', entry: src.base, st, open: () => root.openFile(src.name, O_RDONLY | O_NONBLOCK) };
      return;
    }
    yield { kind: 'dir', entry: src.base, st, open: openNone };
    yield* walk(fd, src.base);
  } finally {
    fs.closeSync(fd);
  }
}

function time(st: fs.BigIntStats): Date {
  return new Date(Number(st.mtimeMs));
}

/** A file's bytes in pieces of at most READ_CHUNK (sized to the file), read until its end. */
async function* fileChunks(fd: number, size: number): AsyncGenerator<Buffer> {
  let pos = 0;
  if (size < SYNC_READ_BELOW) {
    // Small files in one read on this thread: a trip through the thread pool costs more.
    const buf = Buffer.allocUnsafe(size + 1);
    let n = 0;
    for (let got = -1; got !== 0 && n < buf.length; n += got) {
      got = fs.readSync(fd, buf, n, buf.length - n, n);
      // A regular file read short of what was asked, at its planned size, is at its end: the read
      // that would return 0 is one more syscall per file. Any other short read reads on.
      if (n + got === size && got > 0) {
        n += got;
        break;
      }
    }
    if (n <= size) {
      if (n > 0) yield buf.subarray(0, n);
      return;
    }
    // It grew since it was seen: the rest as for a large file.
    yield buf;
    pos = n;
  }
  for (;;) {
    // A fresh buffer per piece: the output may still hold the previous one.
    const want = Math.max(1, Math.min(READ_CHUNK, size - pos > 0 ? size - pos : READ_CHUNK));
    const buf = Buffer.allocUnsafe(want);
    const n = await new Promise<number>((resolve, reject) => fs.read(fd, buf, 0, want, pos, (e, got) => (e ? reject(e) : resolve(got))));
    if (n === 0) return;
    pos += n;
    yield n === want ? buf : buf.subarray(0, n);
  }
}

/**
 * Opens a planned file and checks that what is open is what was planned: a regular file with the
 * device, inode and change time its lstat had. Anything else (swapped for a link, a hard link to another file,
 * a new file, a special file, or gone) is not packed: undefined, and the entry is skipped, as a
 * link or special file found by the walk is. Nothing of it reaches the archive. The `fstat` comes
 * back with the fd: it is what the withheld rule judges, so the open file is looked at once.
 */
function openPlanned(it: Item): { fd: number; st: fs.BigIntStats } | undefined {
  let fd: number;
  try {
    fd = it.open();
  } catch (e) {
    // ELOOP: now a link (opened without following); ENOENT: gone; ENXIO: now a socket.
    const code = errCode(e);
    if (code === 'ELOOP' || code === 'ENOENT' || code === 'ENXIO') return undefined;
    throw e;
  }
  const st = fs.fstatSync(fd, { bigint: true });
  // The change time too: a file removed and another created in its place may get the same inode.
  if (st.isFile() && sameIdentity(identityOf(st), identityOf(it.st)) && st.ctimeNs === it.st.ctimeNs) return { fd, st };
  fs.closeSync(fd);
  return undefined;
}

/** Test-only seams, never set in production. */
export interface PackHooks {
  /** Called right before a planned file is opened, with its entry name, so a test can swap it. */
  beforeOpen?: (entry: string) => void;
}

/**
 * Streams the zip of `src` into `out` and resolves when the last byte has been written into it
 * (the caller ends or flushes `out`). `onProgress(done, total)` gets bytes read of the total size
 * of the files the walk saw first. One file is open at a time; each entry's central directory
 * record goes to `spill` (memory unless the caller gives a file), so memory does not grow with
 * the file count when a file spill is given.
 */
export async function packToStream(
  root: WorldRoot,
  src: Source,
  out: Writable,
  onProgress: (done: number, total: number) => void = () => {},
  spill: Spill = new MemorySpill(),
  hooks: PackHooks = {},
): Promise<PackStats> {
  return packSources(root, [src], new ZipWriter(out, spill), onProgress, hooks);
}

/**
 * Where packed entries go: the zip writer, or a tar packer. `addFile` gets the bytes in pieces and
 * the size the file had when it was opened; `level` is a zip's deflate level (0 stores), which a
 * sink compressing the whole stream ignores.
 */
export interface EntrySink {
  addDirectory(meta: EntryMeta): Promise<void>;
  addFile(meta: EntryMeta, chunks: AsyncIterable<Buffer> | Iterable<Buffer>, level: number, size: number): Promise<unknown>;
  finish(): Promise<void>;
}

/**
 * `packToStream` over several sources, in order, into `sink`: each source's entries under its own
 * base name, by the same rules; progress counts the bytes of every source's files. Finishes the sink.
 */
export async function packSources(
  root: WorldRoot,
  sources: readonly Source[],
  zip: EntrySink,
  onProgress: (done: number, total: number) => void = () => {},
  hooks: PackHooks = {},
): Promise<PackStats> {
  return inWorld(() => packWalked(root, sources, zip, onProgress, hooks));
}

async function packWalked(root: WorldRoot, sources: readonly Source[], zip: EntrySink, onProgress: (done: number, total: number) => void, hooks: PackHooks): Promise<PackStats> {
  const rule = withheldRule(root);
  const props = propertiesIdentity(root);
  const guarded = (id: Identity) => rule.isIdentity(id);

  // First walk: the total, for progress. Nothing is held but the walk's open folders.
  const total = measureWalked(root, sources, guarded).bytes;

  const stats: PackStats = { files: 0, dirs: 0, skipped: 0, withheld: 0, bytesRead: 0 };
  onProgress(0, total);

  for (const src of sources)
    for (const it of items(root, src)) {
      if (it.kind === 'skip') {
        stats.skipped++;
        continue;
      }
      const meta = { name: it.entry, mtime: time(it.st), mode: Number(it.st.mode) };
      if (it.kind === 'dir') {
        await zip.addDirectory(meta);
        stats.dirs++;
        continue;
      }
      const id = identityOf(it.st);
      if (guarded(id)) {
        stats.withheld++;
        continue;
      }
      const size = Number(it.st.size);
      // Opened now, while the walk holds the file's folder; read before the walk moves on.
      hooks.beforeOpen?.(it.entry);
      const opened = openPlanned(it);
      if (opened === undefined) {
        stats.skipped++;
        continue;
      }
      const { fd } = opened;
      try {
        // A file holding a withheld content (a link left behind by a replace) is left out too,
        // judged on the bytes that would be packed, by what is open (not what was looked at).
        const verdict = rule.judge(fd, opened.st);
        if (verdict.withheld) {
          stats.withheld++;
          continue;
        }
        if (verdict.bytes && !sameIdentity(id, props)) {
          stats.bytesRead += verdict.bytes.length;
          await zip.addFile(meta, [verdict.bytes], compressionLevelFor(it.entry, verdict.bytes.length), verdict.bytes.length);
        } else if (sameIdentity(id, props)) {
          const raw = readCapped(fd, MAX_READ_BYTES + 1);
          if (raw.length > MAX_READ_BYTES) {
            stats.withheld++;
            continue;
          }
          stats.bytesRead += raw.length;
          const redacted = redactProperties(raw);
          await zip.addFile(meta, [redacted], LEVEL, redacted.length);
        } else {
          const counted = async function* () {
            for await (const c of fileChunks(fd, size)) {
              stats.bytesRead += c.length;
              onProgress(stats.bytesRead, total);
              yield c;
            }
          };
          await zip.addFile(meta, counted(), compressionLevelFor(it.entry, size), size);
        }
      } finally {
        fs.closeSync(fd);
      }
      stats.files++;
      onProgress(stats.bytesRead, total);
    }
  await zip.finish();
  return stats;
}

/** What the pack of `sources` reads, by its first walk: the withheld file's bytes are left out as the pack leaves them out. */
function measureWalked(root: WorldRoot, sources: readonly Source[], guarded: (id: Identity) => boolean): PackInput {
  const m: PackInput = { bytes: 0, entries: 0, nameBytes: 0 };
  for (const src of sources) {
    for (const it of items(root, src)) {
      if (it.kind === 'skip') continue;
      m.entries++;
      m.nameBytes += Buffer.byteLength(it.entry);
      if (it.kind === 'file' && !guarded(identityOf(it.st))) m.bytes += Number(it.st.size);
    }
  }
  return m;
}

/**
 * A pack's refusal for a full volume with the most the archive of `sources` could take
 * (trash/room.ts `packedRoom` over a walk as the pack's own), so that a rerun purges the trash only
 * for that; walked only then. Without `need` when the sources cannot be walked again.
 */
export async function withPackNeed(root: WorldRoot, sources: readonly Source[], refusal: Result): Promise<Result> {
  if (refusal.code !== 'no_space') return refusal;
  try {
    const rule = withheldRule(root);
    const input = await inWorld(async () => measureWalked(root, sources, (id) => rule.isIdentity(id)));
    return { ...refusal, need: packedRoom(input) };
  } catch {
    return refusal;
  }
}

/** Waits for a writable to flush everything it was given. */
export async function endWritable(w: Writable): Promise<void> {
  w.end();
  await once(w, 'finish');
}
