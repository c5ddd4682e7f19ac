/**
 * rename(path, to): moves a file, a folder (with its contents) or a link (itself). Never replaces,
 * never creates parents, never moves a guarded file (the forwarding secret, `config`, server.properties).
 *
 * @module
 */
import fs from 'node:fs';
import type { Result } from '../../lib/protocol/result.ts';
import { bestEffort, fail, failure, msg } from '../failure.ts';
import { isGuarded, managedMessage, renameGuardIdentities } from '../guard.ts';
import { clean, dir } from '../pathutil.ts';
import { errCode, identityOf, isNotExist, type Parent } from '../root.ts';
import { holdsEntry, withheldEntry } from '../withheld.ts';
import { sweepStale } from '../working-files.ts';
import type { OpContext, OpRequest } from '../types.ts';

const ROOT_MESSAGE = "the server's root folder cannot be moved";

export function rename(ctx: OpContext, req: OpRequest): Result {
  const from = clean(req.path);
  const to = clean(req.to ?? '');
  if (from === '.' || to === '.') return fail('bad_path', ROOT_MESSAGE);

  let src: Parent;
  try {
    src = ctx.root.parentOf(from, 'lstat');
  } catch (e) {
    return failure(from, e, 'lstat');
  }
  try {
    if (src.name === null) return fail('bad_path', ROOT_MESSAGE);
    let st: fs.BigIntStats;
    try {
      st = fs.lstatSync(src.at(), { bigint: true });
    } catch (e) {
      return failure(from, e, 'lstat');
    }
    if (isGuarded(identityOf(st), renameGuardIdentities(ctx.root))) return fail('bad_path', managedMessage(from));
    // A folder holding the withheld file, however deep (`config` may lead elsewhere): moving it
    // would take the file away from its name.
    if (st.isDirectory() && holdsEntry(withheldEntry(ctx.root), identityOf(st))) return fail('bad_path', managedMessage(from));

    const missingFolder = () => fail('not_found', msg.folderMissing(dir(to)));
    let dst: Parent;
    try {
      dst = ctx.root.parentOf(to, 'lstat');
    } catch (e) {
      // A missing destination parent is only known for sure when the rename fails; it is the same answer.
      return isNotExist(e) ? missingFolder() : failure(to, e, 'lstat');
    }
    try {
      if (dst.name === null) return fail('bad_path', ROOT_MESSAGE);
      for (const fd of new Set([src.fd, dst.fd])) sweepStale(fd);
      try {
        fs.lstatSync(dst.at());
        return fail('exists', msg.exists(to));
      } catch (e) {
        if (!isNotExist(e)) return failure(to, e, 'lstat');
      }
      try {
        fs.renameSync(src.at(), dst.at());
      } catch (e) {
        if (errCode(e) === 'ENOENT') return missingFolder();
        return failure(from, e, 'renameat');
      }
      for (const fd of new Set([src.fd, dst.fd])) {
        bestEffort(() => ctx.fsync(fd)); // the move is done either way
      }
      return {};
    } finally {
      dst.close();
    }
  } finally {
    src.close();
  }
}
