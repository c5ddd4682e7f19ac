/**
 * unzip(path, overwrite, to): extracts an archive of the world (zip, tar in every compression, 7z,
 * rar) or a single compressed file (.gz, .bz2, .xz, .zst) into the archive's own folder (or `to`),
 * all or nothing, by the same rules whatever the format. The design
 * (two passes over the entries, external sort, working folder, journaled placement) is described in
 * docs/archives.md.
 *
 * @module
 */

import fs from 'node:fs';
import { extractAll, filledUp, fsyncTree } from '../../../job/archive/extract.ts';
import { entryPathMax } from '../../../job/archive/names.ts';
import { FORMAT_NAMES, OutOfRoom, openPass, type PassScratch } from '../../../job/archive/open-pass.ts';
import type { ArchivePass } from '../../../job/archive/pass.ts';
import { place } from '../../../job/archive/place.ts';
import { isRefusal, planArchive } from '../../../job/archive/plan.ts';
import { TargetCheck } from '../../../job/archive/target.ts';
import { ArchiveReadError, ZipPass } from '../../../job/archive/zip-reader.ts';
import { Journal } from '../../../job/journal/journal.ts';
import { journalHooks } from '../../../job/op-kit/context.ts';
import type { OpContext, OpRequestOf } from '../../../job/runtime/types.ts';
import { linkedEntry, withheldRule } from '../../../job/runtime/withheld.ts';
import { pathHasWorkingName } from '../../../job/runtime/working-files.ts';
import { freeBytes, PER_ITEM_BYTES, roomFor, trashBytes } from '../../../job/trash/room.ts';
import { bestEffort, fail, failure, msg, writeFailure } from '../../../job/volume/failure.ts';
import { secretMessage } from '../../../job/volume/guard.ts';
import { clean, dir } from '../../../job/volume/pathutil.ts';
import { atPath } from '../../../job/volume/root.ts';
import { removeStaleWorkFolders, WORK_PREFIX } from '../../../job/volume/work-folder.ts';
import { type ArchiveFormat, archiveFormat, SINGLE_FILE_FORMATS, UNSUPPORTED_ARCHIVE_MESSAGE } from '../../../lib/files/archive-names.ts';
import { formatRecoveredLine } from '../../../lib/protocol/recovered.ts';
import type { Result } from '../../../lib/protocol/result.ts';
import { ProgressThrottle } from '../../../lib/protocol/result.ts';

const { O_RDONLY, O_NONBLOCK, O_DIRECTORY } = fs.constants;

import { settleExtracted } from '../../../job/runtime/redacted-values.ts';

/** Opens the destination folder: `to` when given, else the archive's own folder. */
function openDest(ctx: OpContext, archive: string, to: string | undefined): { fd: number; rel: string } | Result {
  const rel = to !== undefined && to !== '' ? clean(to) : dir(archive);
  if (to && pathHasWorkingName(to)) return fail('not_found', msg.notExist(to));
  try {
    return { fd: ctx.root.openFile(rel, O_RDONLY | O_DIRECTORY, 'open', true), rel };
  } catch (e) {
    if ((e as { code?: string }).code === 'ENOTDIR') return fail('bad_path', `${to ?? rel} is not a folder`);
    return failure(to || rel, e, 'open');
  }
}

export async function unzip(ctx: OpContext, req: OpRequestOf<'unzip'>): Promise<Result> {
  const name = clean(req.path);
  const format = archiveFormat(name);
  if (format === undefined) return fail('bad_path', `${req.path}: ${UNSUPPORTED_ARCHIVE_MESSAGE}`);

  let fd: number;
  try {
    fd = ctx.root.openFile(name, O_RDONLY | O_NONBLOCK);
  } catch (e) {
    return failure(name, e, 'open');
  }
  try {
    const st = fs.fstatSync(fd, { bigint: true });
    if (st.isDirectory()) return fail('bad_path', msg.isDir(name));
    if (!st.isFile()) return fail('bad_path', msg.notRegular(name));
    if (withheldRule(ctx.root).judge(fd, st).withheld) return fail('bad_path', secretMessage(name));

    const dest = openDest(ctx, name, req.to);
    if (!('fd' in dest)) return dest;
    try {
      return await extractInto(ctx, req, name, format, fd, dest.fd, dest.rel);
    } finally {
      fs.closeSync(dest.fd);
    }
  } finally {
    fs.closeSync(fd);
  }
}

async function extractInto(ctx: OpContext, req: OpRequestOf<'unzip'>, name: string, format: ArchiveFormat, archiveFd: number, destFd: number, destRel: string): Promise<Result> {
  const unreadable = (e: ArchiveReadError) =>
    e.name === 'ArchiveTooLargeError'
      ? fail('too_large', `${name} cannot be extracted: ${e.message}; nothing was changed`)
      : fail('archive_invalid', `${name} is not a readable ${FORMAT_NAMES[format]} archive: ${e.message}; nothing was changed`);
  const outOfRoom = (e: OutOfRoom) => fail('no_space', `${name} ${e.message}; nothing was changed`);
  if (format === 'zip') {
    // A zip that is not one is refused before anything is created (a tar has no index to check).
    try {
      (await ZipPass.open(archiveFd)).close();
    } catch (e) {
      if (e instanceof ArchiveReadError) return unreadable(e);
      throw e;
    }
  }

  removeStaleWorkFolders(destFd);
  const work = WORK_PREFIX + ctx.randomBytes(6).toString('hex');
  // Written down before the working folder exists: whatever stops this Job from here on, the next
  // one that mounts the world read-write finishes or undoes it.
  let journal: Journal;
  try {
    journal = Journal.begin(ctx.root.fd, destFd, 'unzip', work, ctx.randomBytes(6).toString('hex'), journalHooks(ctx), ctx.opId);
  } catch (e) {
    return writeFailure(name, e, 'mkdir');
  }
  ctx.stop.staging(() => {
    journal.finish();
    // The listing then reads, from this Job's own log, that nothing of it was placed.
    if (ctx.opId) ctx.progress(formatRecoveredLine({ op: ctx.opId, kind: 'unzip', now: 'old' }));
  });
  const workPath = atPath(destFd, work);
  try {
    fs.mkdirSync(workPath, 0o700);
  } catch (e) {
    ctx.stop.settled();
    bestEffort(() => journal.finish());
    return writeFailure(name, e, 'mkdir');
  }
  try {
    fs.mkdirSync(`${workPath}/new`, 0o700);
    fs.mkdirSync(`${workPath}/old`, 0o700);
    const check = new TargetCheck(destFd, destRel, linkedEntry(ctx.root));

    const staged = SINGLE_FILE_FORMATS.has(format)
      ? await stageSingleFile(ctx, req, name, format, archiveFd, `${workPath}/new`, check, destRel)
      : await stageArchive(ctx, req, format, archiveFd, workPath, check, entryPathMax(destRel), unreadable, outOfRoom);
    if (staged.code !== undefined) return staged;
    const newDir = `${workPath}/new`;
    // An entry for the root server.properties keeps the values a read showed redacted.
    const placeholder = settleExtracted(ctx, destFd, newDir);
    if (placeholder) return placeholder;

    // Durable before anything moves into the world: one syncfs, or an fsync per file.
    let synced = false;
    try {
      ctx.syncfs(ctx.root.dir);
      synced = true;
    } catch {
      synced = false;
    }
    if (!synced) {
      const full = fsyncTree(newDir, ctx.fsync);
      if (full) return full;
    }

    // From here on a stop signal waits: the placement finishes or rolls back, and the result is printed.
    ctx.stop.settled();
    try {
      place(destFd, work, journal);
    } catch (e) {
      const c = (e as { code?: string }).code;
      if (c === 'ENOSPC' || c === 'EDQUOT') return filledUp();
      throw e;
    }
    return staged;
  } finally {
    ctx.stop.settled();
    // A journal left placing or undoing (an undo that failed) stays for the next Job; every other
    // state removes the working folder, then the journal.
    if (journal.state !== 'placing' && journal.state !== 'undoing') bestEffort(() => journal.finish());
    bestEffort(() => ctx.fsync(destFd));
  }
}

/** A single compressed file, decoded into `new/` (single.ts). */
async function stageSingleFile(
  ctx: OpContext,
  req: OpRequestOf<'unzip'>,
  name: string,
  format: ArchiveFormat,
  archiveFd: number,
  newDir: string,
  check: TargetCheck,
  destRel: string,
): Promise<Result> {
  const { stageSingle } = await import('../../../job/archive/single.ts');
  const throttle = new ProgressThrottle(ctx.progress);
  const room = freeBytes(ctx);
  try {
    return await stageSingle({
      format: format as 'gz' | 'bz2' | 'xz' | 'zst',
      name,
      archiveFd,
      newDir,
      check,
      overwrite: req.overwrite ?? false,
      room,
      // Past the free space the file is decoded on, written nowhere, up to what the trash could add:
      // its no_space then says how much it needs, so a rerun purges only when it would then fit.
      reach: room === undefined ? undefined : room + trashBytes(ctx),
      perItem: PER_ITEM_BYTES,
      pathMax: entryPathMax(destRel),
      chown: ctx.chown,
      progress: (done, total) => throttle.report(done, total),
    });
  } finally {
    throttle.flush();
  }
}

/**
 * An archive of entries: the plan and target check over the sorted names, the space check, and
 * every entry extracted into `new/`. Each pass is a fresh read of the same open file.
 */
async function stageArchive(
  ctx: OpContext,
  req: OpRequestOf<'unzip'>,
  format: ArchiveFormat,
  archiveFd: number,
  workPath: string,
  check: TargetCheck,
  pathMax: number,
  unreadable: (e: ArchiveReadError) => Result,
  outOfRoom: (e: OutOfRoom) => Result,
): Promise<Result> {
  const scratch: PassScratch = { dir: workPath, room: () => freeBytes(ctx) };
  const open = async (withData: boolean): Promise<ArchivePass | Result> => {
    try {
      return await openPass(format, archiveFd, scratch, withData);
    } catch (e) {
      if (e instanceof ArchiveReadError) return unreadable(e);
      if (e instanceof OutOfRoom) return outOfRoom(e);
      const c = (e as { code?: string }).code;
      if (c === 'ENOSPC' || c === 'EDQUOT') return filledUp();
      throw e;
    }
  };
  const planPass = await open(false);
  if (!('next' in planPass)) return planPass;
  let plan;
  try {
    plan = await planArchive(planPass, workPath, (n, kind) => check.visit(n, kind), pathMax);
  } catch (e) {
    if (e instanceof ArchiveReadError) return unreadable(e);
    throw e;
  } finally {
    planPass.close();
  }
  if (isRefusal(plan)) return plan;
  const refusal = check.outcome(req.overwrite ?? false);
  if (refusal) return refusal;

  const need = roomFor(plan.bytes, plan.files + plan.dirs);
  const avail = freeBytes(ctx, need);
  if (avail !== undefined && need > avail) {
    return {
      ...fail('no_space', `the archive needs ${need} bytes and the server's volume has ${avail} free; nothing was changed`),
      need,
      avail,
    };
  }

  // Extract into new/.
  const throttle = new ProgressThrottle(ctx.progress);
  const newDir = `${workPath}/new`;
  const extractPass = await open(true);
  if (!('next' in extractPass)) return extractPass;
  let bad: Result | null;
  try {
    bad = await extractAll(extractPass, newDir, plan.bytes, pathMax, {
      chown: ctx.chown,
      progress: (done, total) => throttle.report(done, total),
    });
  } finally {
    extractPass.close();
    throttle.flush(); // the last progress comes before the result
  }
  // A 7-Zip data run refused for memory says so in the pass's error (its class name), not as damage.
  if (bad && bad.code === 'archive_invalid' && / needs more than the \d+ MiB of memory 7-Zip may use/.test(bad.error ?? '')) {
    return { ...bad, code: 'too_large' };
  }
  if (bad) return bad;
  return { files: plan.files, bytes: plan.bytes };
}

export const runs = { unzip };
