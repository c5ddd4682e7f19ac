/**
 * mkdir(path): one new folder, mode 0755; without `parents`, parents are never created. With
 * `parents` (`--parents`, the route's `parents=true`), makeParents first, and a folder already at
 * the path is no error (mkdir -p).
 *
 * makeParents(path): the missing folders above a path an upload or mkdir names (`parents=true`), each
 * created exactly as mkdir creates its one folder; existing folders are kept as they are.
 *
 * @module
 */
import fs from 'node:fs';
import { GAME_GID, GAME_UID, type OpContext, type OpRequestOf } from '../../../job/runtime/types.ts';
import { pathHasWorkingName, reservedMessage, sweepStale } from '../../../job/runtime/working-files.ts';
import { bestEffort, fail, failure, msg, writeFailure } from '../../../job/volume/failure.ts';
import { clean, dir } from '../../../job/volume/pathutil.ts';
import { errCode, type Parent } from '../../../job/volume/root.ts';
import { newPathRefusal } from '../../../lib/protocol/names.ts';
import type { Result } from '../../../lib/protocol/result.ts';

/** Creates the entry `parent` names as a 0755 folder of the game's uid; 'exists' when something is there. */
function createFolder(ctx: OpContext, parent: Parent, name: string, missingParent: () => Result): Result | 'exists' | undefined {
  try {
    fs.mkdirSync(parent.at(), 0o755);
  } catch (e) {
    const code = errCode(e);
    if (code === 'EEXIST') return 'exists';
    if (code === 'ENOENT') return missingParent();
    return writeFailure(name, e, 'mkdirat');
  }
  bestEffort(() => ctx.chown(parent.at(), GAME_UID, GAME_GID)); // hand the folder to the game's uid
  bestEffort(() => ctx.fsync(parent.fd)); // the folder exists either way
  return undefined;
}

export function mkdir(ctx: OpContext, req: OpRequestOf<'mkdir'>): Result {
  const name = clean(req.path);
  if (name === '.') return fail('bad_path', 'a folder needs a name');
  const badName = newPathRefusal(name);
  if (badName) return fail('bad_path', badName);
  const missingParent = () => fail('not_found', msg.folderMissing(dir(name)));
  if (req.parents) {
    const refused = makeParents(ctx, name);
    if (refused) return refused;
  }

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
    const made = createFolder(ctx, parent, name, missingParent);
    // mkdir -p: a folder (or a link to one inside the world) is what was asked for; a file is not.
    if (made === 'exists') return req.parents && existingFolder(ctx, name) === undefined ? {} : fail('exists', msg.exists(name));
    return made ?? {};
  } finally {
    parent.close();
  }
}

/**
 * What is already at `folder` (one level of an upload's parents): undefined when it is a folder, or
 * a link to one inside the world (followed, as mkdir, a write and the upload itself follow it);
 * else why no folder can be made there. Nothing is ever created through a link.
 */
function existingFolder(ctx: OpContext, folder: string): Result | undefined {
  let own: fs.BigIntStats;
  try {
    own = ctx.root.lstat(folder);
  } catch (e) {
    return failure(folder, e, 'lstat');
  }
  if (own.isDirectory()) return undefined;
  if (!own.isSymbolicLink()) return fail('bad_path', `${folder} is a file, not a folder; no folder was created in its place`);
  let followed: fs.BigIntStats;
  try {
    followed = ctx.root.stat(folder);
  } catch (e) {
    if (errCode(e) === 'ENOENT') return fail('bad_path', `${folder} is a link to nothing; no folder is created through a link`);
    return failure(folder, e, 'stat'); // a link leading out of the world is an escape: bad_path
  }
  return followed.isDirectory() ? undefined : fail('bad_path', `${folder} is a link to a file, not a folder`);
}

/**
 * Creates the missing folders of `path`'s parent, top down, each as mkdir would (0755, the game's
 * uid, never a working name, never through a link leading out or to nothing, inside the world).
 * Folders already there are left as they are. Answers a refusal, or undefined once the parent
 * exists. Folders made before a refusal stay (mkdir -p): they are empty, and a retry needs them.
 */
export function makeParents(ctx: OpContext, path: string): Result | undefined {
  const name = clean(path);
  if (pathHasWorkingName(name)) return fail('bad_path', reservedMessage(name));
  const top = dir(name);
  if (top === '.') return undefined;
  const parts = top.split('/');
  for (let i = 1; i <= parts.length; i++) {
    const folder = parts.slice(0, i).join('/');
    let parent: Parent;
    try {
      parent = ctx.root.parentOf(folder, 'mkdirat');
    } catch (e) {
      return failure(folder, e, 'mkdirat');
    }
    try {
      if (parent.name === null) continue;
      const made = createFolder(ctx, parent, folder, () => fail('not_found', msg.folderMissing(dir(folder))));
      if (made === 'exists') {
        const refused = existingFolder(ctx, folder);
        if (refused) return refused;
      } else if (made) return made;
    } finally {
      parent.close();
    }
  }
  return undefined;
}

export const runs = { mkdir };
