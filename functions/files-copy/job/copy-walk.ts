/**
 * The copy's two walks of the source: `planTree` sums what will be written (for the space check
 * and the progress total) without writing anything; `copyTree` writes the copy into a place the
 * caller chose (a working name). Neither follows a link below the source: a folder is walked one
 * open folder per level, each entry looked at with lstat, and each file opened without following
 * and checked to be what the walk saw (device, inode, change time) before its bytes are copied.
 * File data goes through `fs.copyFileSync` from the open file, which asks the kernel to clone or
 * copy in place (FICLONE, copy_file_range) instead of moving the bytes through this process.
 *
 * @module
 */
import fs from 'node:fs';
import { realFolder } from '../../../job/runtime/moved-links.ts';
import { GAME_GID, GAME_UID, MAX_READ_BYTES, type OpContext } from '../../../job/runtime/types.ts';
import { type WithheldRule, withheldRule } from '../../../job/runtime/withheld.ts';
import { isWorkingName } from '../../../job/runtime/working-files.ts';
import { failure } from '../../../job/volume/failure.ts';
import { propertiesIdentity, redactProperties } from '../../../job/volume/guard.ts';
import { join } from '../../../job/volume/pathutil.ts';
import { readCapped } from '../../../job/volume/read-capped.ts';
import { atPath, errCode, fdPath, type Identity, identityOf, sameIdentity, type WorldRoot } from '../../../job/volume/root.ts';
import type { Result } from '../../../lib/protocol/result.ts';
import { keepsLink } from './copy-links.ts';

const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK, O_DIRECTORY, O_WRONLY, O_CREAT, O_EXCL } = fs.constants;
const COPY_FLAGS = fs.constants.COPYFILE_EXCL | fs.constants.COPYFILE_FICLONE;

export interface Plan {
  /** Bytes of the regular files to copy (their sizes as the walk saw them). */
  bytes: number;
  files: number;
  dirs: number;
}

export interface CopyStats {
  files: number;
  bytes: number;
  /** Links re-created. */
  links: number;
  /** Left out: links that do not stay inside, special files, the withheld file. */
  skipped: number;
}

/** Test-only seams, never set in production. */
export interface CopyHooks {
  /** Called after each file is copied, with its path relative to the copied folder. */
  afterFile?: (rel: string) => void;
  /** Called once the copy is complete and durable, right before it is renamed into place. */
  beforeRename?: () => void;
}

/** What to copy and where: a file or folder of the world, into `destName` in the open folder `destDirFd`. */
export interface CopySpec {
  kind: 'file' | 'dir';
  srcName: string;
  destDirFd: number;
  destName: string;
  /** The root-relative path the copy will have once it lands, its folder as the kernel names it (judges links from there). */
  destPath: string;
}

/** Sums a source's regular files and folders. Returns the plan, or the refusal. */
export function planTree(root: WorldRoot, src: { name: string; isDir: boolean }): Plan | Result {
  const p: Planning = { rule: withheldRule(root), props: propertiesIdentity(root), propsBytes: undefined };
  let fd: number;
  try {
    fd = root.openFile(src.name, src.isDir ? O_RDONLY | O_DIRECTORY : O_RDONLY | O_NONBLOCK, 'open', src.isDir);
  } catch (e) {
    return failure(src.name, e, 'open');
  }
  try {
    const st = fs.fstatSync(fd, { bigint: true });
    if (!src.isDir) return { bytes: plannedBytes(p, st, () => redactedCopy(fd)), files: 1, dirs: 0 };
    const plan: Plan = { bytes: 0, files: 0, dirs: 1 };
    planDir(fd, p, plan);
    return plan;
  } catch (e) {
    return failure(src.name, e, 'read');
  } finally {
    fs.closeSync(fd);
  }
}

interface Planning {
  rule: WithheldRule;
  props: Identity | null;
  /** What the copy writes of the root server.properties, once worked out (every hard link to it writes the same). */
  propsBytes: number | undefined;
}

/**
 * The bytes the copy will write for a regular file: its size, but the redacted length for the root
 * server.properties (copyOpenFile writes that instead, and it differs), so the progress total is
 * what the copy counts and its `done` never passes it. `redacted` reads and redacts it.
 */
function plannedBytes(p: Planning, st: fs.BigIntStats, redacted: () => Buffer | null): number {
  if (!sameIdentity(identityOf(st), p.props)) return Number(st.size);
  p.propsBytes ??= redacted()?.length ?? 0;
  return p.propsBytes;
}

/** What a copy writes of the root server.properties open at `fd`: its redacted form; null when too big to redact in memory (it is left out, as a zip leaves it out). */
function redactedCopy(fd: number): Buffer | null {
  const raw = readCapped(fd, MAX_READ_BYTES + 1);
  return raw.length > MAX_READ_BYTES ? null : redactProperties(raw);
}

function planDir(dirFd: number, p: Planning, plan: Plan): void {
  const d = fs.opendirSync(fdPath(dirFd));
  try {
    for (let ent = d.readSync(); ent; ent = d.readSync()) {
      if (isWorkingName(ent.name)) continue;
      let st: fs.BigIntStats;
      try {
        st = fs.lstatSync(atPath(dirFd, ent.name), { bigint: true });
      } catch {
        continue; // gone since the listing
      }
      if (p.rule.isIdentity(identityOf(st))) continue;
      if (st.isFile()) {
        plan.files++;
        plan.bytes += plannedBytes(p, st, () => redactedAt(dirFd, ent.name));
      } else if (st.isDirectory()) {
        plan.dirs++;
        const fd = fs.openSync(atPath(dirFd, ent.name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
        try {
          planDir(fd, p, plan);
        } finally {
          fs.closeSync(fd);
        }
      }
    }
  } finally {
    d.closeSync();
  }
}

/** `redactedCopy` of the file `name` in `dirFd`, opened without following it; null when it cannot be (the copy judges it again). */
function redactedAt(dirFd: number, name: string): Buffer | null {
  let fd: number;
  try {
    fd = fs.openSync(atPath(dirFd, name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch {
    return null; // gone or swapped since the listing
  }
  try {
    return redactedCopy(fd);
  } finally {
    fs.closeSync(fd);
  }
}

interface Walk {
  ctx: OpContext;
  /** The copied folder's root-relative path as the kernel names it (the source may be spelled through a link). */
  srcTree: string;
  rule: WithheldRule;
  props: Identity | null;
  spec: CopySpec;
  hooks: CopyHooks;
  progress: (done: number) => void;
  stats: CopyStats;
}

/** Writes the copy at `spec.destName`; throws the OS error that stopped it (the caller removes what was written). */
export function copyTree(ctx: OpContext, spec: CopySpec, hooks: CopyHooks, progress: (done: number) => void): CopyStats {
  const fd = ctx.root.openFile(spec.srcName, spec.kind === 'dir' ? O_RDONLY | O_DIRECTORY : O_RDONLY | O_NONBLOCK, 'open', spec.kind === 'dir');
  const stats = { files: 0, bytes: 0, links: 0, skipped: 0 };
  try {
    const srcTree = spec.kind === 'dir' ? realFolder(ctx.root, fd) : spec.srcName;
    const w: Walk = { ctx, srcTree, rule: withheldRule(ctx.root), props: propertiesIdentity(ctx.root), spec, hooks, progress, stats };
    const st = fs.fstatSync(fd, { bigint: true });
    if (spec.kind === 'file') {
      copyOpenFile(w, fd, st, spec.destDirFd, spec.destName, '');
      return w.stats;
    }
    fs.mkdirSync(atPath(spec.destDirFd, spec.destName), 0o700);
    const out = fs.openSync(atPath(spec.destDirFd, spec.destName), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    try {
      copyDir(w, fd, out, '');
      finishDir(w, out, atPath(spec.destDirFd, spec.destName), st);
    } finally {
      fs.closeSync(out);
    }
    return w.stats;
  } finally {
    fs.closeSync(fd);
  }
}

/** The folder's own mode (it was made 0700 so nothing could enter it half built) and owner. */
function finishDir(w: Walk, fd: number, at: string, st: fs.BigIntStats): void {
  fs.fchmodSync(fd, Number(st.mode) & 0o7777);
  chownBack(w, at);
}

/** A courtesy: the game owns what the API makes, as for every write; a failure leaves it the Job's. */
function chownBack(w: Walk, at: string): void {
  try {
    w.ctx.chown(at, GAME_UID, GAME_GID);
  } catch {
    // Deliberately ignored: the copy is complete without it.
  }
}

function copyDir(w: Walk, srcFd: number, destFd: number, rel: string): void {
  const d = fs.opendirSync(fdPath(srcFd));
  try {
    for (let ent = d.readSync(); ent; ent = d.readSync()) {
      if (isWorkingName(ent.name)) continue; // the ops' working files are not the world's
      const name = ent.name;
      const from = atPath(srcFd, name);
      const to = atPath(destFd, name);
      const entryRel = rel === '' ? name : `${rel}/${name}`;
      let st: fs.BigIntStats;
      try {
        st = fs.lstatSync(from, { bigint: true });
      } catch (e) {
        if (errCode(e) === 'ENOENT') continue; // gone since the listing
        throw e;
      }
      if (w.rule.isIdentity(identityOf(st))) {
        w.stats.skipped++;
        continue;
      }
      if (st.isDirectory()) {
        const inFd = fs.openSync(from, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
        try {
          fs.mkdirSync(to, 0o700);
          const outFd = fs.openSync(to, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
          try {
            copyDir(w, inFd, outFd, entryRel);
            finishDir(w, outFd, to, st);
          } finally {
            fs.closeSync(outFd);
          }
        } finally {
          fs.closeSync(inFd);
        }
      } else if (st.isFile()) {
        let fd: number;
        try {
          fd = fs.openSync(from, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
        } catch (e) {
          const code = errCode(e);
          // Now a link, gone, or a socket: not what the walk saw.
          if (code === 'ELOOP' || code === 'ENOENT' || code === 'ENXIO') {
            w.stats.skipped++;
            continue;
          }
          throw e;
        }
        try {
          const now = fs.fstatSync(fd, { bigint: true });
          if (!now.isFile() || !sameIdentity(identityOf(now), identityOf(st)) || now.ctimeNs !== st.ctimeNs) {
            w.stats.skipped++;
            continue;
          }
          copyOpenFile(w, fd, now, destFd, name, entryRel);
        } finally {
          fs.closeSync(fd);
        }
      } else if (st.isSymbolicLink()) {
        const target = fs.readlinkSync(from);
        const place = { srcLink: join(w.srcTree, entryRel), srcTree: w.srcTree, destLink: join(w.spec.destPath, entryRel) };
        if (!keepsLink(w.ctx.root, w.rule, target, place)) {
          w.stats.skipped++;
          continue;
        }
        fs.symlinkSync(target, to);
        chownBack(w, to);
        w.stats.links++;
      } else {
        w.stats.skipped++; // fifos, sockets, devices are never copied
      }
    }
  } finally {
    d.closeSync();
  }
}

/** Copies the open regular file `fd` to `name` in `destFd`, unless it is withheld (then counted as skipped). */
function copyOpenFile(w: Walk, fd: number, st: fs.BigIntStats, destFd: number, name: string, rel: string): void {
  const to = atPath(destFd, name);
  // Judged on what is open: a file holding a withheld content (a link left by a replace) stays out.
  if (w.rule.judge(fd, st).withheld) {
    w.stats.skipped++;
    return;
  }
  if (sameIdentity(identityOf(st), w.props)) {
    const redacted = redactedCopy(fd);
    if (redacted === null) {
      w.stats.skipped++;
      return;
    }
    const out = fs.openSync(to, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, Number(st.mode) & 0o777);
    try {
      fs.writeSync(out, redacted);
      fs.fchmodSync(out, Number(st.mode) & 0o777);
    } finally {
      fs.closeSync(out);
    }
    w.stats.bytes += redacted.length;
  } else {
    // From the open file itself (its /proc name), so what is copied is what was checked.
    fs.copyFileSync(fdPath(fd), to, COPY_FLAGS);
    w.stats.bytes += Number(st.size);
  }
  chownBack(w, to);
  w.stats.files++;
  w.progress(w.stats.bytes);
  w.hooks.afterFile?.(rel);
}
