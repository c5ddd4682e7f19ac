/**
 * What a delete, of one entry (the delete op) or of many (delete-many), checks of its entry once
 * opened: shared here so neither op's folder imports the other's.
 *
 * @module
 */
import fs from 'node:fs';
import type { Result } from '../../lib/protocol/result.ts';
import type { OpContext } from '../runtime/types.ts';
import { holdsEntry, isEntry, linkedEntry, linkedMessage } from '../runtime/withheld.ts';
import { fail, failure } from '../volume/failure.ts';
import { identityOf, type Parent } from '../volume/root.ts';

export const ROOT_DELETE = "the server's root folder cannot be deleted";

/**
 * What a delete checks of its entry once opened: that it exists, and that it is not the withheld
 * file (or a folder holding it) while other links to it exist. Its lstat, or the refusal.
 */
export function judgeDelete(ctx: OpContext, name: string, parent: Parent & { name: string }): { st: fs.BigIntStats } | Result {
  let st: fs.BigIntStats;
  try {
    st = fs.lstatSync(parent.at(), { bigint: true });
  } catch (e) {
    return failure(name, e, 'lstat');
  }
  // The withheld file (or a folder holding it) stays while other links to it exist: deleting it
  // would leave its content at them under ordinary names. The other links can go.
  const linked = linkedEntry(ctx.root);
  if (linked && (isEntry(linked, parent.fd, parent.name) || (st.isDirectory() && holdsEntry(linked, identityOf(st))))) {
    return fail('withheld_linked', linkedMessage(name));
  }
  return { st };
}
