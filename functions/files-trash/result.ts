/**
 * files-trash's results: a page of undo-trash records, the paths a restore put back, what a purge
 * removed, decoded from the Job's Result. Pure; the function's side only (never bundled into the
 * Job program).
 * @module
 */
import { FileEditError, isEditErrorKind } from '../../lib/files/errors.ts';
import { checkResult } from '../../lib/files/result-check.ts';
import type { Result, TrashItem } from '../../lib/protocol/result.ts';

/** trash-list: a page of records, newest first; `next` the id the next page starts after. */
export interface TrashPage {
  items: TrashItem[];
  next?: string;
  trashBytes: number;
}

export function decodeTrashList(r: Result): TrashPage {
  checkResult(r);
  return { items: r.trash_items ?? [], ...(r.trash_next ? { next: r.trash_next } : {}), trashBytes: r.trash_bytes ?? 0 };
}

/** A refusal whose `entry` names the path it is about (a restore onto an existing path): the envelope's `path`. */
function checkNaming(r: Result): void {
  if (r.code && isEditErrorKind(r.code)) throw new FileEditError(r.code, r.error, r.entry || undefined);
  checkResult(r);
}

/** trash-restore: the paths put back, in the record's order. */
export function decodeTrashRestore(r: Result): { restored: string[] } {
  checkNaming(r);
  return { restored: r.restored ?? [] };
}

/** trash-purge: records removed for good, and the bytes that freed. */
export function decodeTrashPurge(r: Result): { purged: number; bytes: number } {
  checkResult(r);
  return { purged: r.purged ?? 0, bytes: r.bytes ?? 0 };
}
