/**
 * files-delete's result: the undo-trash record the delete made, if any, decoded from the Job's
 * Result. Pure; the function's side only (never bundled into the Job program).
 * @module
 */
import { checkResult } from '../../lib/files/result-check.ts';
import type { Result } from '../../lib/protocol/result.ts';

/** What a mutation that may have put something in the undo trash says of it: its record's id. */
export interface Trashed {
  trashId?: string;
}

/** A delete (or any op answered with no more than success): the trash record it made, if any. */
export function decodeTrashed(r: Result): Trashed {
  checkResult(r);
  return r.trash_id ? { trashId: r.trash_id } : {};
}
