/**
 * pull-place(path, to, pull-op): places what the pull `pull-op` downloaded into its staging
 * (pull-staging.ts) as the file `to` in the existing folder `path`, then removes the staging. Run by
 * the placing pass (lib/maintenance/pull-placement.ts) once the pull's Job has ended `staged`, as a
 * short mutation that holds the world like any other: the only moment a pull changes the world.
 *
 * The landing is judged here again, as a pull judged it before fetching, since the folder may have
 * changed meanwhile: the name rule, not the withheld file, never over an existing name (a link,
 * which fails where a rename would replace), and no redacted placeholder landing as the root
 * server.properties. The staging's record must name this very folder and name. Whatever the
 * outcome, the staging goes: a refused download can never land later. A placement that finds its
 * own link already there (an earlier attempt stopped before it removed the staging) finishes it.
 * @module
 */
import fs from 'node:fs';
import { freeLandingRefused } from '../../../job/runtime/redacted-values.ts';
import type { OpContext, OpRequestOf } from '../../../job/runtime/types.ts';
import { bestEffort, fail, failure, msg, writeFailure } from '../../../job/volume/failure.ts';
import { clean, join } from '../../../job/volume/pathutil.ts';
import { atPath, errCode, identityOf, sameIdentity } from '../../../job/volume/root.ts';
import type { Result } from '../../../lib/protocol/result.ts';
import { checkName } from './pull-landing.ts';
import { DATA, isOpId, PullStaging, StagingNotOurs } from './pull-staging.ts';

const { O_RDONLY, O_DIRECTORY } = fs.constants;

export function pullPlace(ctx: OpContext, req: OpRequestOf<'pull-place'>): Result {
  const opId = req.pullOp;
  const name = req.to ?? '';
  if (!isOpId(opId) || name === '') return fail('bad_path', "a placement needs the pull's op id and the name it lands as");
  const folder = clean(req.path);
  const final = join(folder, name);
  const gone = (why: string) => fail('not_found', `the file pull ${opId} downloaded is no longer staged (${why}); nothing was placed: pull it again`);
  let staging: PullStaging | undefined;
  try {
    staging = PullStaging.open(ctx.root.fd, opId);
  } catch (e) {
    if (e instanceof StagingNotOurs) return gone(e.message);
    throw e;
  }
  if (!staging) return gone('its staging folder is not there: removed after its time, or by a restore of the world');
  let data: { fd: number; st: fs.BigIntStats } | undefined;
  try {
    const record = staging.record();
    if (!record || record.op !== opId) return gone('its staging holds no record of it');
    if (record.path !== folder || record.name !== name) return gone(`its record says ${join(record.path, record.name)}, not ${final}`);
    try {
      data = staging.openData();
    } catch (e) {
      if (e instanceof StagingNotOurs || errCode(e) === 'ENOENT') return gone(e instanceof StagingNotOurs ? e.message : 'its file is missing');
      throw e;
    }
    return land(ctx, staging, data, folder, name, final);
  } finally {
    if (data) fs.closeSync(data.fd);
    // Placed or refused, the download is done with: a refused one can never land later.
    bestEffort(() => staging!.remove());
    staging.close();
  }
}

function land(ctx: OpContext, staging: PullStaging, data: { fd: number; st: fs.BigIntStats }, folder: string, name: string, final: string): Result {
  let dirFd: number;
  try {
    dirFd = ctx.root.openFile(folder, O_RDONLY | O_DIRECTORY, 'open', true);
  } catch (e) {
    return failure(folder === '' ? '.' : folder, e, 'open');
  }
  try {
    const bytes = Number(data.st.size);
    const done: Result = { files: 1, bytes, to: final };
    // An earlier attempt linked it and stopped before removing the staging: it is in place.
    if (data.st.nlink === 2n && alreadyLinked(dirFd, name, data.st)) return done;
    // No other name may share the staged file: what lands must be what the pull wrote, alone.
    if (data.st.nlink !== 1n) return fail('not_found', `the file the pull downloaded has ${data.st.nlink} links; nothing was placed: pull it again`);
    const refused = checkName(ctx, dirFd, folder, name, 'the pull');
    if (refused) return refused;
    // A file that would become the root server.properties holding a redacted placeholder is refused.
    const placeholder = freeLandingRefused(ctx.root, dirFd, name, final, data.fd);
    if (placeholder) return placeholder;
    try {
      // A link fails on an existing name where a rename would replace it.
      fs.linkSync(staging.at(DATA), atPath(dirFd, name));
    } catch (e) {
      if (errCode(e) === 'EEXIST') return fail('exists', msg.exists(final));
      if (errCode(e) === 'EXDEV') return fail('bad_path', `${folder === '' ? '.' : folder} is on another volume mounted in the world: a pull lands only on the world's own volume; nothing was placed`);
      return writeFailure(final, e, 'link');
    }
    bestEffort(() => ctx.fsync(dirFd)); // the link happened; durability of the entry is best effort
    return done;
  } finally {
    fs.closeSync(dirFd);
  }
}

/** Whether `name` in `dirFd` is already the staged file itself (same inode, not followed). */
function alreadyLinked(dirFd: number, name: string, st: fs.BigIntStats): boolean {
  const there = fs.lstatSync(atPath(dirFd, name), { bigint: true, throwIfNoEntry: false });
  return there?.isFile() === true && sameIdentity(identityOf(there), identityOf(st));
}

export const runs = { 'pull-place': pullPlace };
