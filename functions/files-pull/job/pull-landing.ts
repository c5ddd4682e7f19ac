/**
 * What a pulled file may land as: the one check of a name a pull would create, made by the pull
 * before it fetches (a given name) or once the answer names the file, and again by the placement
 * (pull-place.ts), which is what counts: the folder may have changed in between. Kept apart from
 * pull.ts so the placement does not load the HTTP client.
 * @module
 */

import type { OpContext } from '../../../job/runtime/types.ts';
import { isWithheldName } from '../../../job/runtime/withheld.ts';
import { isWorkingName, reservedMessage } from '../../../job/runtime/working-files.ts';
import { fail, msg } from '../../../job/volume/failure.ts';
import { join } from '../../../job/volume/pathutil.ts';
import { existsAt } from '../../../job/volume/root.ts';
import { newNameRefusal, shownName } from '../../../lib/protocol/names.ts';
import type { Result } from '../../../lib/protocol/result.ts';

/**
 * The refusal of a name the pull would create, or null when it may: one new file's name by the
 * name rule and without a backslash, not a working name (`bad_name`, whether the caller gave it or
 * the server suggested it), not the withheld file (`bad_path`), not taken (`exists`).
 */
export function checkName(ctx: OpContext, dirFd: number, folder: string, name: string, from: string): Result | null {
  const badName =
    newNameRefusal(`the name (from ${from})`, name) ?? (name.includes('\\') ? `the name (from ${from}) ${JSON.stringify(shownName(name))} must be one name, without a backslash` : undefined);
  if (badName) return fail('bad_name', `${badName}; nothing was placed`);
  if (isWorkingName(name)) return fail('bad_name', `${reservedMessage(name)} (from ${from}); nothing was placed`);
  const final = join(folder, name);
  if (isWithheldName(ctx.root, final)) return fail('bad_path', `${final}: the withheld file cannot be created by a pull`);
  if (existsAt(dirFd, name)) return fail('exists', msg.exists(final));
  return null;
}
