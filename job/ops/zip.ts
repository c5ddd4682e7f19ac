/**
 * zip(path, to): packs a file or folder of the world into a .zip beside it: a free
 * `<name>.zip` (then `<name> (2).zip`, ...) or the name `to` in the same folder. The archive is
 * written under an editor working name (hidden from every op, see working-files.ts), fsynced,
 * chowned to the game's uid and renamed into place, so a crash leaves no half archive under a real
 * name. Withheld and redacted files follow the download rules (archive/pack.ts).
 *
 * @module
 */
import fs from 'node:fs';
import type { Result } from '../../lib/protocol/result.ts';
import { ProgressThrottle } from '../../lib/protocol/result.ts';
import { bestEffort, fail, failure, msg, writeFailure } from '../failure.ts';
import { dir, join } from '../pathutil.ts';
import { atPath, errCode, existsAt, NAME_MAX } from '../root.ts';
import { GAME_GID, GAME_UID, type OpContext, type OpRequest } from '../types.ts';
import { isWorkingName, reservedMessage, TEMP_PREFIX } from '../working-files.ts';
import { endWritable, packToStream, resolveSource } from '../archive/pack.ts';
import { FileSpill } from '../archive/zip-writer.ts';

const { O_WRONLY, O_RDWR, O_CREAT, O_EXCL, O_NOFOLLOW, O_RDONLY, O_DIRECTORY } = fs.constants;
/** Free names tried before giving up: `x.zip`, `x (2).zip`, ... `x (1000).zip`. */
export const MAX_NAME_TRIES = 1000;

/** A name the archive may take in its folder, or the refusal. */
function archiveName(dirFd: number, folder: string, base: string, to: string | undefined): string | Result {
  if (to !== undefined && to !== '') {
    if (to.includes('/') || to.includes('\0') || to === '.' || to === '..' || Buffer.byteLength(to) > NAME_MAX) {
      return fail('bad_path', `${to} is not a file name (a name without slashes, at most ${NAME_MAX} bytes)`);
    }
    if (isWorkingName(to)) return fail('bad_path', reservedMessage(to));
    if (existsAt(dirFd, to)) return fail('exists', msg.exists(join(folder, to)));
    return to;
  }
  for (let i = 1; i <= MAX_NAME_TRIES; i++) {
    const name = i === 1 ? `${base}.zip` : `${base} (${i}).zip`;
    if (Buffer.byteLength(name) > NAME_MAX) return fail('bad_path', `${base} is too long a name to add .zip to; give the archive a name`);
    if (!existsAt(dirFd, name)) return name;
  }
  return fail('exists', `${join(folder, `${base}.zip`)} and the next ${MAX_NAME_TRIES - 1} numbered names already exist`);
}

export async function zip(ctx: OpContext, req: OpRequest): Promise<Result> {
  const src = resolveSource(ctx.root, req.path);
  if (!('isDir' in src)) return src;
  const folder = dir(src.name);
  let dirFd: number;
  try {
    dirFd = ctx.root.openFile(folder, O_RDONLY | O_DIRECTORY, 'open', true);
  } catch (e) {
    return failure(folder, e, 'open');
  }
  try {
    let target: string | Result;
    try {
      target = archiveName(dirFd, folder, src.base, req.to);
    } catch (e) {
      return failure(folder, e, 'lstat');
    }
    if (typeof target !== 'string') return target;
    const final = join(folder, target);

    const temp = TEMP_PREFIX + ctx.randomBytes(6).toString('hex');
    let fd: number;
    try {
      fd = fs.openSync(atPath(dirFd, temp), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o644);
    } catch (e) {
      return writeFailure(final, e, 'open');
    }
    let landed = false;
    let spillFd: number | undefined;
    try {
      // The central directory waits in a file of its own beside the archive, unlinked at once, so
      // memory does not grow with the file count and nothing is left behind whatever happens.
      const spillName = TEMP_PREFIX + ctx.randomBytes(6).toString('hex');
      try {
        spillFd = fs.openSync(atPath(dirFd, spillName), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
        fs.unlinkSync(atPath(dirFd, spillName));
      } catch (e) {
        return writeFailure(final, e, 'open');
      }
      fs.fchmodSync(fd, 0o644);
      const out = fs.createWriteStream('', { fd, autoClose: false });
      const throttle = new ProgressThrottle(ctx.progress);
      let stats;
      try {
        stats = await packToStream(ctx.root, src, out, (done, total) => throttle.report(done, total), new FileSpill(spillFd));
        await endWritable(out);
      } catch (e) {
        throttle.flush();
        out.destroy();
        const code = errCode(e);
        if (code === 'ENOSPC' || code === 'EDQUOT') return fail('no_space', msg.noSpace(final));
        if (code !== undefined && /^E[A-Z0-9]+$/.test(code)) return failure(src.name, e, 'read');
        throw e;
      }
      throttle.flush(); // the last progress comes before the result
      try {
        ctx.fsync(fd);
      } catch (e) {
        return writeFailure(final, e, 'sync');
      }
      const size = fs.fstatSync(fd).size;
      bestEffort(() => ctx.chown(atPath(dirFd, temp), GAME_UID, GAME_GID)); // a courtesy: the game can still read it
      // The world is held by this Job: nothing can have taken the name since it was chosen.
      try {
        fs.renameSync(atPath(dirFd, temp), atPath(dirFd, target));
      } catch (e) {
        return writeFailure(final, e, 'rename');
      }
      landed = true;
      bestEffort(() => ctx.fsync(dirFd)); // the rename happened; durability of the entry is best effort
      return { files: stats.files, bytes: size };
    } finally {
      if (spillFd !== undefined) fs.closeSync(spillFd);
      fs.closeSync(fd);
      if (!landed) bestEffort(() => fs.unlinkSync(atPath(dirFd, temp)));
    }
  } finally {
    fs.closeSync(dirFd);
  }
}
