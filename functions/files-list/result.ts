/**
 * files-list's result: a folder's entries (or a page of them) and what the volume has free, decoded
 * from the Job's Result. Pure; the function's side only (never bundled into the Job program).
 * @module
 */
import { checkResult } from '../../lib/files/result-check.ts';
import type { Entry, Result } from '../../lib/protocol/result.ts';

export interface Listing {
  entries: Entry[];
  truncated: boolean;
  /** Free bytes on the volume; negative when unknown. A missing `avail` means a full volume. */
  free: number;
  /** Bytes the undo trash holds (a mutation gives them back when it needs room); 0 when none or not told. */
  trashBytes: number;
}

export function decodeList(r: Result): Listing {
  checkResult(r);
  return { entries: r.entries ?? [], truncated: r.truncated ?? false, free: r.avail ?? 0, trashBytes: r.trash_bytes ?? 0 };
}
