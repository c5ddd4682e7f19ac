/**
 * region-plan(path, below) and region-prune(path, below): every chunk whose InhabitedTime is below
 * `below` goes from every region file of a world's `region/` folder (`path` names the world folder
 * or that folder), and the chunks at the same places from the files of the same name in
 * `entities/` and `poi/` beside it, with the external `c.X.Z.mcc` of each chunk that goes. Each
 * changed file is rewritten compactly (region-format.ts: packed from sector 2, timestamps kept, the
 * kept chunks' stored bytes copied unchanged); a file left with no chunk is removed.
 *
 * The plan reads only (the dry run answers it). The prune stages every new file in a working
 * folder at the world root, then places them through the journal (docs/journal.md: the old file
 * moved aside, the new one in), so a stop at any moment leaves every old file or every new one;
 * once committed, the old files go into the undo trash. A chunk that cannot be read is kept; a
 * region file with a corrupt header or slot (in it, or in its entities/ or poi/ file) is left
 * alone whole and reported.
 * @module
 */
import fs from 'node:fs';
import { Journal } from '../../../job/journal/journal.ts';
import { journalHooks } from '../../../job/op-kit/context.ts';
import type { OpContext, OpRequestOf } from '../../../job/runtime/types.ts';
import { withheldRule } from '../../../job/runtime/withheld.ts';
import { beginRecord, type Incoming, resumeIntake } from '../../../job/trash/store.ts';
import { bestEffort, fail, failure, writeFailure } from '../../../job/volume/failure.ts';
import { dir } from '../../../job/volume/pathutil.ts';
import { atPath, canonicalRel, errCode, fdPath, isNotExist } from '../../../job/volume/root.ts';
import { WORK_PREFIX } from '../../../job/volume/work-folder.ts';
import { formatRecoveredLine } from '../../../lib/protocol/recovered.ts';
import { ProgressThrottle, type Result } from '../../../lib/protocol/result.ts';
import { PRUNE_REPORT_FILES, type PruneReport } from '../op.ts';
import { compactHeader, regionCoords, SECTOR } from './region-format.ts';
import { type ChunkInfo, type ExternalReader, externalReader, packedSectors, readRegion, storedBytes } from './region-io.ts';

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK, O_DIRECTORY } = fs.constants;
/** The folders beside `region/` whose files hold the same chunks. */
const BESIDE = ['entities', 'poi'] as const;

/** Chunk indexes of one region (0–1023) as 128 bytes: a plan of many files stays small. */
export class Indexes {
  readonly #bits = new Uint8Array(128);
  size = 0;
  add(i: number): void {
    if (!this.has(i)) this.size++;
    this.#bits[i >> 3]! |= 1 << (i & 7);
  }
  has(i: number): boolean {
    return (this.#bits[i >> 3]! & (1 << (i & 7))) !== 0;
  }
}

/** One file of a region's trio (region, entities, poi) as planned. */
interface Member {
  /** Root-relative, as the kernel names it. */
  rel: string;
  dirFd: number;
  name: string;
  size: number;
  st: fs.BigIntStats;
  coords: { x: number; z: number };
  /** Its chunks while it is planned; emptied once planned (staging reads the header again), so a plan of many files stays small. */
  chunks: ChunkInfo[];
  /** Rewritten (some chunk goes), removed (every chunk goes), or neither. */
  change: 'rewrite' | 'remove' | 'none';
  /** Its size once rewritten (0 when removed). */
  newSize: number;
}

interface FilePlan {
  rel: string;
  members: Member[];
  removed: Indexes;
  chunksRemoved: number;
  bytesFreed: number;
  /** External chunk files that go, root-relative, with their sizes. */
  externals: { rel: string; size: number; st: fs.BigIntStats }[];
}

interface Folders {
  regionRel: string;
  regionFd: number;
  beside: { rel: string; fd: number }[];
  close(): void;
}

const isRegionFolder = (p: string) => p === 'region' || p.endsWith('/region');

/** A folder directly inside `parentFd` (never a link): its fd, or null when absent. Throws for anything else. */
function openChildDir(parentFd: number, name: string): number | null {
  try {
    return fs.openSync(atPath(parentFd, name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  } catch (e) {
    if (isNotExist(e)) return null;
    throw e;
  }
}

/** The region folder and the entities/ and poi/ folders beside it; a refusal naming the caller's path. */
function openFolders(ctx: OpContext, name: string): Folders | Result {
  const clean = name.replace(/\/+$/, '');
  if (/\.mc[ac]$/.test(clean)) return fail('bad_path', `${name} is a file: a prune names a world folder or its region folder`);
  const world = isRegionFolder(clean) ? dir(clean) || '.' : clean || '.';
  let worldFd: number;
  try {
    worldFd = ctx.root.openDir(world);
  } catch (e) {
    return failure(world, e, 'open');
  }
  const fds: number[] = [];
  const close = () => {
    for (const fd of fds) bestEffort(() => fs.closeSync(fd));
  };
  try {
    let regionFd: number | null;
    try {
      regionFd = openChildDir(worldFd, 'region');
    } catch (e) {
      return fail('bad_path', `${world === '.' ? '' : `${world}/`}region is not a folder (${errCode(e) ?? 'unreadable'})`);
    }
    if (regionFd === null) return fail('not_found', `${name} holds no region folder`);
    fds.push(regionFd);
    const regionRel = canonicalRel(ctx.root.fd, regionFd);
    if (regionRel === null) {
      close();
      return fail('bad_path', `${name}: its region folder cannot be named inside the world`);
    }
    const beside: { rel: string; fd: number }[] = [];
    for (const b of BESIDE) {
      let fd: number | null;
      try {
        fd = openChildDir(worldFd, b);
      } catch (e) {
        close();
        return fail('bad_path', `${world === '.' ? '' : `${world}/`}${b} is not a folder (${errCode(e) ?? 'unreadable'}): its chunks could not be pruned with the region's`);
      }
      if (fd === null) continue;
      fds.push(fd);
      const rel = canonicalRel(ctx.root.fd, fd);
      if (rel === null) {
        close();
        return fail('bad_path', `${name}: its ${b} folder cannot be named inside the world`);
      }
      beside.push({ rel, fd });
    }
    return { regionRel, regionFd, beside, close };
  } finally {
    fs.closeSync(worldFd);
  }
}

const relIn = (folder: string, name: string) => (folder === '' ? name : `${folder}/${name}`);

/** Reads `c.X.Z.mcc` by its bare name below the region folder's fd, never through a link. */
function externalAt(dirFd: number): ExternalReader {
  return externalReader((file) => fs.openSync(atPath(dirFd, file), O_RDONLY | O_NOFOLLOW | O_NONBLOCK));
}

/** A member file read (its chunks' InhabitedTime only for the region file); null when absent; a string: why it is left alone. */
function readMember(ctx: OpContext, dirFd: number, folderRel: string, name: string, coords: { x: number; z: number }, region: boolean): Member | null | string {
  let fd: number;
  try {
    fd = fs.openSync(atPath(dirFd, name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch (e) {
    if (isNotExist(e)) return null;
    return `${relIn(folderRel, name)} cannot be opened (${errCode(e) ?? 'unreadable'}; a link is never followed here)`;
  }
  try {
    const st = fs.fstatSync(fd, { bigint: true });
    const rel = relIn(folderRel, name);
    if (!st.isFile()) return `${rel} is not a regular file`;
    if (withheldRule(ctx.root).judge(fd, st).withheld) return `${rel} is a file the editor never reads`;
    const size = Number(st.size);
    let chunks: ChunkInfo[];
    try {
      chunks = readRegion(fd, size, coords, externalAt(dirFd), region).chunks;
    } catch (e) {
      if (e instanceof RangeError) return `${rel} has no region header: ${e.message}`;
      throw e;
    }
    const bad = chunks.find((c) => c.corruptSlot);
    if (bad) return `${rel}: the slot of chunk ${bad.x},${bad.z} cannot be trusted (${bad.error})`;
    return { rel, dirFd, name, size, st, coords, chunks, change: 'none', newSize: size };
  } finally {
    fs.closeSync(fd);
  }
}

function externalStat(dirFd: number, file: string): fs.BigIntStats | null {
  try {
    const st = fs.lstatSync(atPath(dirFd, file), { bigint: true });
    return st.isFile() ? st : null;
  } catch {
    return null;
  }
}

/** Settles what a member becomes once `removed` go: its change, new size, and the external files that go with them. */
function settle(m: Member, removed: Indexes, externals: FilePlan['externals']): number {
  const kept = m.chunks.filter((c) => !removed.has(c.index));
  if (kept.length === m.chunks.length) return 0;
  for (const c of m.chunks) {
    if (!removed.has(c.index) || !c.external) continue;
    const file = `c.${c.x}.${c.z}.mcc`;
    const st = externalStat(m.dirFd, file);
    if (st !== null) externals.push({ rel: relIn(dir(m.rel), file), size: Number(st.size), st });
  }
  if (kept.length === 0) {
    m.change = 'remove';
    m.newSize = 0;
  } else {
    m.change = 'rewrite';
    m.newSize = (2 + kept.reduce((n, c) => n + packedSectors(c), 0)) * SECTOR;
  }
  return m.size - m.newSize;
}

interface Plan {
  folders: Folders;
  files: FilePlan[];
  scanned: number;
  unreadable: number;
  skipped: { path: string; reason: string }[];
}

/** Reads every region file of the folder and decides what goes. The caller closes `folders`. */
function plan(ctx: OpContext, name: string, below: bigint): Plan | Result {
  const folders = openFolders(ctx, name);
  if (!('regionFd' in folders)) return folders;
  try {
    const names = fs
      .readdirSync(fdPath(folders.regionFd))
      .filter((n) => regionCoords(n) !== null)
      .sort();
    const out: Plan = { folders, files: [], scanned: 0, unreadable: 0, skipped: [] };
    for (const n of names) {
      const coords = regionCoords(n)!;
      out.scanned++;
      const main = readMember(ctx, folders.regionFd, folders.regionRel, n, coords, true);
      const rel = relIn(folders.regionRel, n);
      if (main === null) continue; // gone since the listing
      if (typeof main === 'string') {
        out.skipped.push({ path: rel, reason: main });
        continue;
      }
      out.unreadable += main.chunks.filter((c) => c.inhabited === null).length;
      const removed = new Indexes();
      for (const c of main.chunks) if (c.inhabited !== null && c.inhabited < below) removed.add(c.index);
      if (removed.size === 0) continue;
      const members: Member[] = [main];
      let why: string | undefined;
      for (const b of folders.beside) {
        const m = readMember(ctx, b.fd, b.rel, n, coords, false);
        if (typeof m === 'string') why = m;
        else if (m) members.push(m);
      }
      if (why) {
        out.skipped.push({ path: rel, reason: why });
        continue;
      }
      const externals: FilePlan['externals'] = [];
      let freed = 0;
      for (const m of members) freed += settle(m, removed, externals);
      // Every chunk of the region gone: its entities/ and poi/ files go whole with it.
      if (main.change === 'remove') {
        for (const m of members.slice(1)) {
          if (m.change === 'remove') continue;
          freed += m.newSize;
          m.change = 'remove';
          m.newSize = 0;
        }
      }
      for (const e of externals) freed += e.size;
      for (const m of members) m.chunks = [];
      out.files.push({ rel, members: members.filter((m) => m.change !== 'none'), removed, chunksRemoved: removed.size, bytesFreed: freed, externals });
    }
    return out;
  } catch (e) {
    folders.close();
    throw e;
  }
}

function reportOf(p: Plan, below: bigint): PruneReport {
  return {
    region: p.folders.regionRel,
    below: below.toString(),
    scanned: p.scanned,
    files_changed: p.files.length,
    files: p.files.slice(0, PRUNE_REPORT_FILES).map((f) => ({ path: f.rel, chunks_removed: f.chunksRemoved, bytes_freed: f.bytesFreed, removed: f.members[0]!.change === 'remove' })),
    chunks_removed: p.files.reduce((n, f) => n + f.chunksRemoved, 0),
    bytes_freed: p.files.reduce((n, f) => n + f.bytesFreed, 0),
    unreadable_chunks: p.unreadable,
    skipped: p.skipped.slice(0, PRUNE_REPORT_FILES),
  };
}

export function regionPlan(ctx: OpContext, req: OpRequestOf<'region-plan'>): Result {
  // The contract refuses a missing or malformed bound; 0 would prune nothing.
  const below = BigInt(req.below ?? '0');
  let p: Plan | Result;
  try {
    p = plan(ctx, req.path, below);
  } catch (e) {
    return failure(req.path, e, 'read');
  }
  if (!('folders' in p)) return p;
  p.folders.close();
  return { report: reportOf(p, below) };
}

function writeAll(fd: number, b: Buffer): void {
  let off = 0;
  while (off < b.length) off += fs.writeSync(fd, b, off, b.length - off);
}

/** Writes the compact form of `m` without `removed` to `to` (a /proc path), owned and moded as the old file. */
export function writeCompact(ctx: OpContext, m: Member, removed: Indexes, to: string): void {
  const src = fs.openSync(atPath(m.dirFd, m.name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  try {
    const st = fs.fstatSync(src, { bigint: true });
    // The world is held: only something outside felis-world could have changed it since the plan.
    if (st.ino !== m.st.ino || st.dev !== m.st.dev || st.size !== m.st.size || st.mtimeNs !== m.st.mtimeNs)
      throw Object.assign(new Error(`${m.rel} changed while it was pruned`), { code: 'ECHANGED' });
    // The header again (the plan keeps none): the same file, so the same sound slots, in index order.
    const kept = readRegion(src, m.size, m.coords, () => null, false).chunks.filter((c) => !removed.has(c.index));
    const { header } = compactHeader(kept.map((c) => ({ index: c.index, timestamp: c.timestamp, sectors: packedSectors(c) })));
    const out = fs.openSync(to, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
    try {
      writeAll(out, header);
      for (const c of kept) {
        const bytes = storedBytes(src, c);
        const padded = Buffer.alloc(packedSectors(c) * SECTOR);
        bytes.copy(padded);
        writeAll(out, padded);
      }
      fs.fchmodSync(out, Number(m.st.mode) & 0o7777);
      ctx.fsync(out);
    } finally {
      fs.closeSync(out);
    }
    bestEffort(() => ctx.chown(to, Number(m.st.uid), Number(m.st.gid)));
  } finally {
    fs.closeSync(src);
  }
}

/** Test-only seams, never set in production. */
export interface PruneHooks {
  /** Called once every new file is staged, before the placement (a test stops the Job here). */
  beforePlace?: () => void;
}

export function regionPrune(ctx: OpContext, req: OpRequestOf<'region-prune'>, hooks: PruneHooks = {}): Result {
  const name = req.path;
  // The contract refuses a missing or malformed bound; 0 would prune nothing.
  const below = BigInt(req.below ?? '0');
  let p: Plan | Result;
  try {
    p = plan(ctx, name, below);
  } catch (e) {
    return failure(name, e, 'read');
  }
  if (!('folders' in p)) return p;
  try {
    const report = reportOf(p, below);
    if (p.files.length === 0) return { files: 0, bytes: 0, report };
    return place(ctx, name, p, report, hooks);
  } finally {
    p.folders.close();
  }
}

function place(ctx: OpContext, name: string, p: Plan, report: PruneReport, hooks: PruneHooks): Result {
  const work = WORK_PREFIX + ctx.randomBytes(6).toString('hex');
  let journal: Journal;
  try {
    journal = Journal.begin(ctx.root.fd, ctx.root.fd, 'region-prune', work, ctx.randomBytes(6).toString('hex'), journalHooks(ctx), ctx.opId);
  } catch (e) {
    return writeFailure(name, e, 'mkdir');
  }
  ctx.stop.staging(() => {
    journal.finish();
    if (ctx.opId) ctx.progress(formatRecoveredLine({ op: ctx.opId, kind: 'region-prune', now: 'old' }));
  });
  let kept: string[] = [];
  let trashId: string | undefined;
  try {
    const workPath = atPath(ctx.root.fd, work);
    for (const d of [workPath, `${workPath}/new`, `${workPath}/old`]) {
      fs.mkdirSync(d, 0o700);
      fs.chmodSync(d, 0o700); // the umask may have narrowed it; ours is exactly 0700
    }
    // What the prune moves aside, in slot order (`old/<k>` is slot k), for the one trash record.
    const aside: Incoming[] = [];
    const total = p.files.reduce((n, f) => n + f.members.filter((m) => m.change === 'rewrite').length, 0);
    const progress = new ProgressThrottle(ctx.progress);
    let done = 0;
    let k = 0;
    for (const f of p.files) {
      for (const m of f.members) {
        const slot = k++;
        aside.push({ path: m.rel, st: m.st });
        if (m.change === 'rewrite') {
          writeCompact(ctx, m, f.removed, `${workPath}/new/${slot}`);
          progress.report(++done, total);
          journal.add(['aside', m.rel, `${work}/old/${slot}`]);
          journal.add(['in', `${work}/new/${slot}`, m.rel]);
        } else journal.add(['aside', m.rel, `${work}/old/${slot}`]);
      }
      for (const e of f.externals) {
        aside.push({ path: e.rel, st: e.st });
        journal.add(['aside', e.rel, `${work}/old/${k++}`]);
      }
    }
    progress.flush();
    // The record is written down before the plan is sealed, and the journal names it: whoever
    // finishes the prune puts every old file into this one record. It is no replace record: a
    // removed file's place stays empty, and recovery must not take that for a replace undone.
    trashId = beginRecord(ctx, 'region-prune', false, aside);
    if (trashId) journal.keepIn(trashId);
    // The staged files are durable before the plan is sealed: each was fsynced; their folder too.
    const newFd = fs.openSync(`${workPath}/new`, O_RDONLY | O_DIRECTORY);
    try {
      ctx.fsync(newFd);
    } finally {
      fs.closeSync(newFd);
    }
    hooks.beforePlace?.();
    // From here on a stop signal waits: the placement finishes or rolls back, and the result is printed.
    ctx.stop.settled();
    try {
      journal.place();
    } catch (e) {
      if (journal.state !== 'undone') throw e;
      const failed = journal.failedMove;
      return writeFailure(failed?.[1] ?? name, e, 'renameat');
    }
  } catch (e) {
    if (journal.state === 'staging') {
      if ((e as { code?: string }).code === 'ECHANGED') return fail('conflict', `${(e as Error).message}; nothing was changed`);
      return writeFailure(name, e, 'write');
    }
    throw e;
  } finally {
    ctx.stop.settled();
    // A journal left placing or undoing (an undo that failed) stays for the next Job; every other
    // state removes the working folder (the old files, unless the trash took them), then itself.
    if (journal.state !== 'placing' && journal.state !== 'undoing') {
      bestEffort(() => {
        kept = journal.finish();
      });
    }
    // A record begun for a prune that was not made (and never will be) holds nothing: it goes.
    if (trashId && (journal.state === 'staging' || journal.state === 'undone')) bestEffort(() => resumeIntake(ctx, trashId!)?.seal());
  }
  return { files: report.files_changed, bytes: report.bytes_freed, report: { ...report, ...(kept.length > 0 ? { trash_ids: kept } : {}) } };
}

export const runs = {
  'region-plan': regionPlan,
  'region-prune': (ctx: OpContext, req: OpRequestOf<'region-prune'>) => regionPrune(ctx, req),
};
