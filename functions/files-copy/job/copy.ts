/**
 * copy(path, to): copies a file or a folder (recursively) of the world to `to`, or beside the
 * original under a free `<name> copy<.ext>` name (copy-name.ts). All or nothing: the copy is built
 * under a working name in the destination folder (a `.felis-edit-` file for a file, a 0700
 * `.felis-unzip-` working folder holding `new/` for a folder: both swept by the next mutation there
 * if this Job dies), made durable, and renamed into place in one step. Space for every byte is
 * checked before the first one is written.
 *
 * What is copied (copy-walk.ts): regular files (a hard link becomes a file of its own), folders,
 * and links that stay inside the world (copy-links.ts); other links, special files (fifos,
 * sockets, devices) and the withheld file (by identity or content) are left out and counted in
 * `skipped`; the ops' working files are not the world's and are not seen at all. The root
 * server.properties (by identity) is copied redacted, as a zip or a download carries it, so a copy
 * never reveals what a read of the original redacts. New entries are given to the game's uid/gid.
 *
 * `maxSize` (a synchronous copy): anything but a regular file of at most that many bytes is
 * refused with `too_large` before anything is written, so the caller can start it as a background
 * op instead.
 *
 * @module
 */

import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { resolveSource } from '../../../job/archive/pack.ts';
import { realFolder } from '../../../job/runtime/moved-links.ts';
import { landsOnProperties, placeholderRefused } from '../../../job/runtime/redacted-values.ts';
import type { OpContext, OpRequestOf } from '../../../job/runtime/types.ts';
import { pathHasWorkingName, reservedMessage, sweepStale, TEMP_PREFIX } from '../../../job/runtime/working-files.ts';
import { freeBytes, roomFor } from '../../../job/trash/room.ts';
import { bestEffort, fail, failure, msg } from '../../../job/volume/failure.ts';
import { clean, dir, join, leadsOutside } from '../../../job/volume/pathutil.ts';
import { atPath, errCode, existsAt, isNotExist, type Parent } from '../../../job/volume/root.ts';
import { WORK_PREFIX } from '../../../job/volume/work-folder.ts';
import { newPathRefusal } from '../../../lib/protocol/names.ts';
import type { Result } from '../../../lib/protocol/result.ts';
import { ProgressThrottle } from '../../../lib/protocol/result.ts';
import { freeCopyName } from './copy-name.ts';
import { type CopyHooks, type CopyStats, copyTree, planTree } from './copy-walk.ts';

export type { CopyHooks } from './copy-walk.ts';

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK } = fs.constants;

/** The destination: its folder (kept open), its name there, and its root-relative path. */
interface Dest {
  parent: Parent;
  name: string;
  path: string;
}

function destOf(ctx: OpContext, srcName: string, isDir: boolean, to: string | undefined): Dest | Result {
  if (to !== undefined && to !== '') {
    const t = clean(to);
    if (t === '.' || t.startsWith('/') || leadsOutside(t) || to.includes('\0')) return fail('bad_path', `${to} is not a path inside the world`);
    if (pathHasWorkingName(t)) return fail('bad_path', reservedMessage(t));
    const badName = newPathRefusal(t);
    if (badName) return fail('bad_path', badName);
    let parent: Parent;
    try {
      parent = ctx.root.parentOf(t, 'lstat');
    } catch (e) {
      return isNotExist(e) ? fail('not_found', msg.folderMissing(dir(t))) : failure(t, e, 'lstat');
    }
    if (parent.name === null) {
      parent.close();
      return fail('bad_path', `${to} is not a file name the copy can take`);
    }
    try {
      if (existsAt(parent.fd, parent.name)) {
        parent.close();
        return fail('exists', msg.exists(t));
      }
    } catch (e) {
      parent.close();
      return failure(t, e, 'lstat');
    }
    return { parent, name: parent.name, path: t };
  }
  let parent: Parent;
  try {
    parent = ctx.root.parentOf(srcName, 'lstat');
  } catch (e) {
    return failure(srcName, e, 'lstat');
  }
  const base = srcName.slice(srcName.lastIndexOf('/') + 1);
  let name: string | undefined;
  try {
    name = freeCopyName(base, isDir, (c) => existsAt(parent.fd, c));
  } catch (e) {
    parent.close();
    return failure(dir(srcName), e, 'lstat');
  }
  if (name === undefined) {
    parent.close();
    return fail('exists', `no free name for a copy of ${srcName} beside it; give the copy a name with to`);
  }
  return { parent, name, path: join(dir(srcName), name) };
}

export function copy(ctx: OpContext, req: OpRequestOf<'copy'>): Result {
  return copyWith(ctx, req, {});
}

/** `copy` with test seams (a failure injected mid-copy). */
export function copyWith(ctx: OpContext, req: OpRequestOf<'copy'>, hooks: CopyHooks): Result {
  const src = resolveSource(ctx.root, req.path);
  if (!('isDir' in src)) return src;
  // The destination is judged first, so a refusal (exists, no folder) is the sync answer for any source.
  const dest = destOf(ctx, src.name, src.isDir, req.to);
  if (!('parent' in dest)) return dest;
  try {
    const sync = req.maxSize !== undefined && req.maxSize >= 0;
    // A folder is refused before its walk: the background Job walks it once.
    if (sync && src.isDir) return fail('too_large', `${src.name} is a folder: it is copied in the background`);
    const plan = planTree(ctx.root, src);
    if (!('dirs' in plan)) return plan;
    const placeholder = src.isDir ? null : ontoProperties(ctx, src.name, dest);
    if (placeholder) return placeholder;
    if (sync && plan.bytes > req.maxSize!) return fail('too_large', `${src.name} is ${plan.bytes} bytes: it is copied in the background`);
    // Every byte must fit before the first one is written.
    const need = roomFor(plan.bytes, plan.files + plan.dirs);
    const avail = freeBytes(ctx, need);
    if (avail !== undefined && need > avail) {
      return { ...fail('no_space', `the copy needs ${need} bytes and the server's volume has ${avail} free; nothing was changed`), need, avail };
    }
    sweepStale(dest.parent.fd); // what a dead copy (or write, or extraction) left here
    const throttle = new ProgressThrottle(ctx.progress);
    const progress = (done: number) => throttle.report(done, plan.bytes);
    progress(0);
    let r: Result;
    try {
      r = src.isDir ? copyFolder(ctx, src, dest, hooks, progress) : copyFile(ctx, src.name, dest, sync, hooks, progress);
      // A copy that landed is all done, though a file left out on the way (a withheld content, one
      // changed since the plan) wrote less than planned.
      if (r.code === undefined) progress(plan.bytes);
    } finally {
      throttle.flush(); // the last progress comes before the result
    }
    return r;
  } finally {
    dest.parent.close();
  }
}

/** A file copied to where the root server.properties would be must hold no redacted placeholder. */
function ontoProperties(ctx: OpContext, srcName: string, dest: Dest): Result | null {
  if (!landsOnProperties(ctx.root, dest.parent.fd, dest.name)) return null;
  let fd: number;
  try {
    fd = ctx.root.openFile(srcName, O_RDONLY | O_NONBLOCK);
  } catch (e) {
    return failure(srcName, e, 'open');
  }
  try {
    return placeholderRefused(ctx.root, dest.path, fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Where the copy lands, its folder as the kernel names it: `to` may pass through a link, and a link is judged from where it really is. */
function realPath(ctx: OpContext, dest: Dest): string {
  const folder = realFolder(ctx.root, dest.parent.fd);
  return folder === '' ? dest.name : `${folder}/${dest.name}`;
}

function outcome(e: unknown, final: string, srcName: string): Result {
  const code = errCode(e);
  if (code === 'ENOSPC' || code === 'EDQUOT') return fail('no_space', msg.noSpace(final));
  if (code !== undefined && /^E[A-Z0-9]+$/.test(code)) return failure(srcName, e, 'copy');
  throw e;
}

/** One regular file: into a working file beside the destination, synced, renamed into place. */
function copyFile(ctx: OpContext, srcName: string, dest: Dest, hash: boolean, hooks: CopyHooks, progress: (done: number) => void): Result {
  const dirFd = dest.parent.fd;
  const temp = TEMP_PREFIX + ctx.randomBytes(6).toString('hex');
  let landed = false;
  let stats: CopyStats;
  try {
    stats = copyTree(ctx, { kind: 'file', srcName, destDirFd: dirFd, destName: temp, destPath: realPath(ctx, dest) }, hooks, progress);
    if (stats.files === 0) return fail('bad_path', `${srcName} is withheld (or a server.properties too large to redact); it is never copied`);
    let sha256: string | undefined;
    const fd = fs.openSync(atPath(dirFd, temp), O_RDONLY | O_NOFOLLOW);
    try {
      ctx.fsync(fd);
      if (hash) sha256 = hashFd(fd);
    } finally {
      fs.closeSync(fd);
    }
    hooks.beforeRename?.();
    // The world is held by this Job: nothing can have taken the name since it was found free.
    fs.renameSync(atPath(dirFd, temp), atPath(dirFd, dest.name));
    landed = true;
    bestEffort(() => ctx.fsync(dirFd)); // the rename happened; the entry's durability is best effort
    return { sha256, files: stats.files, bytes: stats.bytes, to: dest.path, skipped: stats.skipped };
  } catch (e) {
    return outcome(e, dest.path, srcName);
  } finally {
    if (!landed) bestEffort(() => fs.unlinkSync(atPath(dirFd, temp)));
  }
}

/** A folder: built as `new/` in a working folder beside the destination, then renamed into place. */
function copyFolder(ctx: OpContext, src: { name: string }, dest: Dest, hooks: CopyHooks, progress: (done: number) => void): Result {
  const dirFd = dest.parent.fd;
  const work = WORK_PREFIX + ctx.randomBytes(6).toString('hex');
  let workFd: number | undefined;
  try {
    // 0700 and ours: what removeStaleWorkFolders recognises, so a dead copy's is swept.
    fs.mkdirSync(atPath(dirFd, work), 0o700);
    fs.chmodSync(atPath(dirFd, work), 0o700);
    workFd = fs.openSync(atPath(dirFd, work), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    const stats = copyTree(ctx, { kind: 'dir', srcName: src.name, destDirFd: workFd, destName: 'new', destPath: realPath(ctx, dest) }, hooks, progress);
    // One syncfs for every file written; where it cannot run, each file and folder is fsynced.
    try {
      ctx.syncfs(ctx.root.dir);
    } catch {
      fsyncTree(ctx, workFd, 'new');
    }
    hooks.beforeRename?.();
    fs.renameSync(atPath(workFd, 'new'), atPath(dirFd, dest.name));
    bestEffort(() => ctx.fsync(dirFd)); // the rename happened; the entry's durability is best effort
    return { files: stats.files, bytes: stats.bytes, to: dest.path, skipped: stats.skipped };
  } catch (e) {
    return outcome(e, dest.path, src.name);
  } finally {
    if (workFd !== undefined) fs.closeSync(workFd);
    // Whatever is left (all of the copy when it failed, an empty folder when it landed) goes.
    bestEffort(() => fs.rmSync(atPath(dirFd, work), { recursive: true, force: true }));
  }
}

function hashFd(fd: number): string {
  const h = createHash('sha256');
  const buf = Buffer.allocUnsafe(1 << 20);
  for (let pos = 0; ; ) {
    const n = fs.readSync(fd, buf, 0, buf.length, pos);
    if (n === 0) break;
    h.update(buf.subarray(0, n));
    pos += n;
  }
  return h.digest('hex');
}

/** fsync of every file and folder under `name` in `dirFd` (links are not opened). */
function fsyncTree(ctx: OpContext, dirFd: number, name: string): void {
  const fd = fs.openSync(atPath(dirFd, name), O_RDONLY | O_NOFOLLOW);
  try {
    if (fs.fstatSync(fd).isDirectory()) {
      for (const ent of fs.readdirSync(atPath(dirFd, name), { withFileTypes: true })) {
        if (ent.isDirectory() || ent.isFile()) fsyncTree(ctx, fd, ent.name);
      }
    }
    ctx.fsync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

export const runs = { copy };
