/**
 * Turns a Job's Result into what each op returns, or the typed error its code means. Pure.
 * @module
 */
import { createHash } from 'node:crypto';
import { EDIT_ERRORS as CODES } from '../protocol/edit-codes.ts';
import type { Entry, Result, SearchMatch, TrashItem } from '../protocol/result.ts';
import { FileEditError, isEditErrorKind, ReadDamagedError, UnknownResultCodeError } from './errors.ts';

/** Throws the error a result code stands for; returns the Result when it is a success. */
export function checkResult(r: Result): Result {
  if (!r.code) return r;
  if (isEditErrorKind(r.code)) throw new FileEditError(r.code, r.error);
  throw new UnknownResultCodeError(r.code, r.error);
}

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

/** What a mutation that may have put something in the undo trash says of it: its record's id. */
export interface Trashed {
  trashId?: string;
}

/** A delete (or any op answered with no more than success): the trash record it made, if any. */
export function decodeTrashed(r: Result): Trashed {
  checkResult(r);
  return r.trash_id ? { trashId: r.trash_id } : {};
}

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

export interface Search {
  matches: SearchMatch[];
  /** Stopped early: more matches than the limit, or the time budget ran out. */
  truncated: boolean;
  scanned: number;
}

export function decodeSearch(r: Result): Search {
  checkResult(r);
  return { matches: r.matches ?? [], truncated: r.truncated ?? false, scanned: r.scanned ?? 0 };
}

export interface ReadFile {
  content: Buffer;
  /** SHA-256 of the bytes on disk (before redaction): what a later write sends as expect_sha256. */
  sha256: string;
  /** SHA-256 of `content`, as sent. */
  contentSha256: string;
}

/** A read whose bytes do not hash to `content_sha256`, or with none, is damaged (never returned). */
export function decodeRead(r: Result): ReadFile {
  checkResult(r);
  const content = Buffer.from(r.content ?? '', 'base64');
  const got = createHash('sha256').update(content).digest('hex');
  if (!r.content_sha256 || got !== r.content_sha256) throw new ReadDamagedError();
  return { content, sha256: r.sha256 ?? '', contentSha256: got };
}

export function decodeWrite(r: Result): string {
  checkResult(r);
  return r.sha256 ?? '';
}

/** A synchronous copy's outcome: where it landed and the SHA-256 of the copy's bytes. */
export interface Copied {
  to: string;
  sha256: string;
  files: number;
  bytes: number;
  skipped: number;
}

export function decodeCopy(r: Result): Copied {
  checkResult(r);
  return { to: r.to ?? '', sha256: r.sha256 ?? '', files: r.files ?? 0, bytes: r.bytes ?? 0, skipped: r.skipped ?? 0 };
}

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
