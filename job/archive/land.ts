/**
 * Lands a packed archive in the world, for every packing op (zip, compress): the archive is written
 * under an editor working name (hidden from every op, see working-files.ts), fsynced, chowned to the
 * game's uid and renamed into place, so a crash or a failure leaves no archive and no partial file
 * under a real name. A zip's central directory can wait in a spill file beside it, unlinked at once,
 * so memory does not grow with the file count and nothing is left behind whatever happens.
 *
 * @module
 */
import fs from 'node:fs';
import type { Writable } from 'node:stream';
import type { Result } from '../../lib/protocol/result.ts';
import { ProgressThrottle } from '../../lib/protocol/result.ts';
import { GAME_GID, GAME_UID, type OpContext } from '../runtime/types.ts';
import { TEMP_PREFIX } from '../runtime/working-files.ts';
import { bestEffort, fail, failure, msg, writeFailure } from '../volume/failure.ts';
import { atPath, errCode } from '../volume/root.ts';
import { endWritable } from './pack.ts';
import { FileSpill, type Spill } from './zip-writer.ts';

const { O_WRONLY, O_RDWR, O_CREAT, O_EXCL, O_NOFOLLOW } = fs.constants;

/** Where the archive lands: its folder (open), its name there, and the names errors are told by. */
export interface Landing {
  dirFd: number;
  name: string;
  /** The archive's root-relative name. */
  final: string;
  /** The name a read error of the packing is told by (the source, or the selection's folder). */
  readName: string;
  /** Give the writer a spill file for a zip's central directory. */
  spill: boolean;
  /** Test-only seam: called once every entry is in the output, before it is synced and renamed. */
  beforeLand?: () => void;
}

/** What the writer gets: the archive's stream, the spill when asked for, and the progress reporter. */
export type PackInto<T> = (out: Writable, spill: Spill | undefined, progress: (done: number, total: number) => void) => Promise<T>;

/**
 * Writes the archive through `pack` and lands it; resolves with what `pack` returned and the
 * archive's size, or the refusal (nothing left behind). The world is held by this Job: nothing can
 * have taken the name since the caller checked it.
 */
export async function landArchive<T>(ctx: OpContext, at: Landing, pack: PackInto<T>): Promise<{ packed: T; size: number } | Result> {
  const { dirFd, final } = at;
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
    if (at.spill) {
      const spillName = TEMP_PREFIX + ctx.randomBytes(6).toString('hex');
      try {
        spillFd = fs.openSync(atPath(dirFd, spillName), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
        fs.unlinkSync(atPath(dirFd, spillName));
      } catch (e) {
        return writeFailure(final, e, 'open');
      }
    }
    fs.fchmodSync(fd, 0o644);
    const out = fs.createWriteStream('', { fd, autoClose: false });
    const throttle = new ProgressThrottle(ctx.progress);
    let packed: T;
    try {
      packed = await pack(out, spillFd === undefined ? undefined : new FileSpill(spillFd), (done, total) => throttle.report(done, total));
      await endWritable(out);
    } catch (e) {
      throttle.flush();
      out.destroy();
      if (e instanceof Error && e.name === 'ShrankError') return fail('conflict', e.message);
      const code = errCode(e);
      if (code === 'ENOSPC' || code === 'EDQUOT') return fail('no_space', msg.noSpace(final));
      if (code !== undefined && /^E[A-Z0-9]+$/.test(code)) return failure(at.readName, e, 'read');
      throw e;
    }
    throttle.flush(); // the last progress comes before the result
    at.beforeLand?.();
    try {
      ctx.fsync(fd);
    } catch (e) {
      return writeFailure(final, e, 'sync');
    }
    const size = fs.fstatSync(fd).size;
    bestEffort(() => ctx.chown(atPath(dirFd, temp), GAME_UID, GAME_GID)); // a courtesy: the game can still read it
    try {
      fs.renameSync(atPath(dirFd, temp), atPath(dirFd, at.name));
    } catch (e) {
      return writeFailure(final, e, 'rename');
    }
    landed = true;
    bestEffort(() => ctx.fsync(dirFd)); // the rename happened; durability of the entry is best effort
    return { packed, size };
  } finally {
    if (spillFd !== undefined) fs.closeSync(spillFd);
    fs.closeSync(fd);
    if (!landed) bestEffort(() => fs.unlinkSync(atPath(dirFd, temp)));
  }
}
