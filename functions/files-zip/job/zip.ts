/**
 * zip(path, to): packs a file or folder of the world into a .zip beside it: a free
 * `<name>.zip` (then `<name> (2).zip`, ...) or the name `to` in the same folder. The archive is
 * landed by archive/land.ts: written under an editor working name, fsynced, chowned to the game's
 * uid and renamed into place, so a crash leaves no half archive under a real name. Withheld and redacted files follow the download rules (archive/pack.ts).
 *
 * @module
 */
import fs from 'node:fs';
import { landArchive } from '../../../job/archive/land.ts';
import { packToStream, resolveSource, withPackNeed } from '../../../job/archive/pack.ts';
import type { OpContext, OpRequestOf } from '../../../job/runtime/types.ts';
import { isWorkingName, reservedMessage } from '../../../job/runtime/working-files.ts';
import { fail, failure, msg } from '../../../job/volume/failure.ts';
import { dir, join } from '../../../job/volume/pathutil.ts';
import { existsAt } from '../../../job/volume/root.ts';
import { NAME_MAX, newNameRefusal } from '../../../lib/protocol/names.ts';
import type { Result } from '../../../lib/protocol/result.ts';

const { O_RDONLY, O_DIRECTORY } = fs.constants;
/** Free names tried before giving up: `x.zip`, `x (2).zip`, ... `x (1000).zip`. */
export const MAX_NAME_TRIES = 1000;

/** A name the archive may take in its folder, or the refusal: a given name by the name rule (`bad_name`). */
function archiveName(dirFd: number, folder: string, base: string, to: string | undefined): string | Result {
  if (to !== undefined && to !== '') {
    const badName = newNameRefusal('the archive name', to);
    if (badName) return fail('bad_name', badName);
    if (isWorkingName(to)) return fail('bad_name', reservedMessage(to));
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

export async function zip(ctx: OpContext, req: OpRequestOf<'zip'>): Promise<Result> {
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

    const landed = await landArchive(ctx, { dirFd, name: target, final, readName: src.name, spill: true }, (out, spill, progress) => packToStream(ctx.root, src, out, progress, spill));
    if (!('packed' in landed)) return withPackNeed(ctx.root, [src], landed);
    return { files: landed.packed.files, bytes: landed.size };
  } finally {
    fs.closeSync(dirFd);
  }
}

export const runs = { zip };
