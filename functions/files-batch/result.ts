/**
 * files-batch's result: the items a batch applied and those the disk refused, decoded from the
 * Job's Result. Pure; the function's side only (never bundled into the Job program).
 * @module
 */
import { FileEditError, isEditErrorKind, UnknownResultCodeError } from '../../lib/files/errors.ts';
import { EDIT_ERRORS as CODES } from '../../lib/protocol/edit-codes.ts';
import type { Result } from '../../lib/protocol/result.ts';

/** What a batch did: the items applied, and those the disk refused after the check (envelope codes). */
export interface BatchOutcome {
  done: string[];
  failed: Array<{ path: string; error: { code: string; message: string } }>;
  /** delete-many: the undo-trash record of what it removed, when it made one. */
  trashId?: string;
}

/** A refused batch throws the error of its first bad item, with that item's path; else what it did. */
export function decodeBatch(r: Result): BatchOutcome {
  if (r.code) {
    if (isEditErrorKind(r.code)) throw new FileEditError(r.code, r.error, r.entry);
    throw new UnknownResultCodeError(r.code, r.error);
  }
  const failed = (r.failed ?? []).map((f) => ({ path: f.path, error: { code: isEditErrorKind(f.error.code) ? CODES[f.error.code].code : 'internal', message: f.error.message } }));
  return { done: r.done ?? [], failed, ...(r.trash_id ? { trashId: r.trash_id } : {}) };
}
