/**
 * mkdir(path): one new folder, mode 0755; parents are never created.
 *
 * @module
 */
import fs from 'node:fs';
import type { Result } from '../../lib/protocol/result.ts';
import { bestEffort, fail, failure, msg, writeFailure } from '../failure.ts';
import { clean, dir } from '../pathutil.ts';
import { errCode, type Parent } from '../root.ts';
import { sweepStale } from '../working-files.ts';
import { GAME_GID, GAME_UID, type OpContext, type OpRequest } from '../types.ts';

export function mkdir(ctx: OpContext, req: OpRequest): Result {
  const name = clean(req.path);
  if (name === '.') return fail('bad_path', 'a folder needs a name');
  const missingParent = () => fail('not_found', msg.folderMissing(dir(name)));

  let parent: Parent;
  try {
    parent = ctx.root.parentOf(name, 'mkdirat');
  } catch (e) {
    return errCode(e) === 'ENOENT' ? missingParent() : failure(name, e, 'mkdirat');
  }
  try {
    // A cleaned path other than "." always ends in a name (a leading ".." is refused as an escape).
    if (parent.name === null) return fail('exists', msg.exists(name));
    sweepStale(parent.fd);
    try {
      fs.mkdirSync(parent.at(), 0o755);
    } catch (e) {
      const code = errCode(e);
      if (code === 'EEXIST') return fail('exists', msg.exists(name));
      if (code === 'ENOENT') return missingParent();
      return writeFailure(name, e, 'mkdirat');
    }
    bestEffort(() => ctx.chown(parent.at(), GAME_UID, GAME_GID)); // hand the folder to the game's uid
    bestEffort(() => ctx.fsync(parent.fd)); // the folder exists either way
    return {};
  } finally {
    parent.close();
  }
}
