/**
 * chmod-many: every file's mode set to three octal digits (permission bits only: no setuid,
 * setgid or sticky bit, which the mode's shape cannot say). Every item is checked first: a
 * regular file or a folder (a link has no mode of its own and is refused, never followed; a
 * special file is refused too), not the withheld file under any name or link (read's rule), not
 * the root, not the same entry twice (`batch_conflict`). Then each mode is set, one atomic
 * call each.
 *
 * @module
 */
import fs from 'node:fs';
import type { OpContext, OpRequestOf } from '../../../job/runtime/types.ts';
import { withheldRule } from '../../../job/runtime/withheld.ts';
import { refuseWorkingPath } from '../../../job/runtime/working-files.ts';
import { isOpened, openEntry } from '../../../job/volume/entry.ts';
import { fail, failure } from '../../../job/volume/failure.ts';
import { isSecretName, secretMessage } from '../../../job/volume/guard.ts';
import { clean } from '../../../job/volume/pathutil.ts';
import { errCode, type Identity, identityOf } from '../../../job/volume/root.ts';
import { MODE, type ModeChange } from '../../../lib/protocol/batch-env.ts';
import type { BatchFailure, Result } from '../../../lib/protocol/result.ts';
import { changedSince, conflict, diskFailure, outcome, placeOf, refusal, sameEntry } from './batch-common.ts';

const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK } = fs.constants;

export const ROOT_MODE = "the server's root folder's mode cannot be changed";

interface Item {
  path: string;
  mode: number;
  id: Identity;
}

/** Every change checked; the items, or the refusal of the first bad one. */
export function checkModes(ctx: OpContext, files: ModeChange[]): Item[] | Result {
  const items: Item[] = [];
  const seen = new Set<string>();
  for (const f of files) {
    const hidden = refuseWorkingPath(f.path, false);
    if (hidden) return refusal(f.path, hidden);
    if (!MODE.test(f.mode)) return refusal(f.path, fail('bad_path', `${f.mode} is not three octal digits`));
    // The secret by name, before anything is looked up (as read refuses it).
    if (isSecretName(f.path)) return refusal(f.path, fail('bad_path', secretMessage(clean(f.path))));
    const opened = openEntry(ctx.root, f.path, ROOT_MODE);
    if (!isOpened(opened)) return refusal(f.path, opened);
    const { name, parent } = opened;
    try {
      let st: fs.BigIntStats;
      try {
        st = fs.lstatSync(parent.at(), { bigint: true });
      } catch (e) {
        return refusal(f.path, failure(name, e, 'lstat'));
      }
      if (st.isSymbolicLink()) return refusal(f.path, fail('bad_path', `${name} is a link; a link has no mode of its own`));
      if (!st.isFile() && !st.isDirectory()) return refusal(f.path, fail('bad_path', `${name} is not a regular file or a folder`));
      if (withheldRule(ctx.root).judgeAt(parent.fd, parent.name, st)) return refusal(f.path, fail('bad_path', secretMessage(name)));
      const place = placeOf(ctx.root, parent);
      if (seen.has(place.key)) return conflict(f.path, `${f.path} is named twice in the batch`);
      seen.add(place.key);
      items.push({ path: f.path, mode: parseInt(f.mode, 8), id: identityOf(st) });
    } finally {
      parent.close();
    }
  }
  return items;
}

/**
 * Sets one checked mode; null when done. On the file itself, opened without following a link
 * (fchmod); a file its mode keeps us from opening (a non-root Job, mode 000) is changed by its
 * entry instead, once its lstat says it is still the same file and no link.
 */
function chmodOne(ctx: OpContext, item: Item): BatchFailure | null {
  const opened = openEntry(ctx.root, item.path, ROOT_MODE);
  if (!isOpened(opened)) return changedSince(item.path);
  const { parent } = opened;
  try {
    let fd: number | undefined;
    try {
      fd = fs.openSync(parent.at(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
    } catch (e) {
      if (errCode(e) !== 'EACCES') return errCode(e) === 'ELOOP' || errCode(e) === 'ENOENT' ? changedSince(item.path) : diskFailure(item.path, e, 'openat');
    }
    try {
      const st = fd !== undefined ? fs.fstatSync(fd, { bigint: true }) : fs.lstatSync(parent.at(), { bigint: true });
      if (!sameEntry(st, item.id) || st.isSymbolicLink()) return changedSince(item.path);
      if (fd !== undefined) fs.fchmodSync(fd, item.mode);
      else fs.chmodSync(parent.at(), item.mode);
    } catch (e) {
      return diskFailure(item.path, e, 'fchmod');
    } finally {
      if (fd !== undefined) fs.closeSync(fd);
    }
    return null;
  } finally {
    parent.close();
  }
}

export function chmodMany(ctx: OpContext, req: OpRequestOf<'chmod-many'>): Result {
  const files = req.batch && 'files' in req.batch ? req.batch.files : [];
  const checked = checkModes(ctx, files);
  if (!Array.isArray(checked)) return checked;
  const done: string[] = [];
  const failed: BatchFailure[] = [];
  for (const item of checked) {
    const f = chmodOne(ctx, item);
    if (f) failed.push(f);
    else done.push(item.path);
    ctx.journalStep?.(`batch:item:${done.length + failed.length}`);
  }
  return outcome(done, failed);
}

export const runs = { 'chmod-many': chmodMany };
