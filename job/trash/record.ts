/**
 * One record of the undo trash, on disk: `.felis-edit-undo/<id>/record.json` beside the entries it
 * holds, each under its item's index (`0`, `1`, ...). The id starts with the record's time, so ids
 * sort by age and what has expired is known from the folder names alone.
 *
 * A record is ours only when this program's user wrote it for itself: a regular file (never a link)
 * owned by the Job's user and writable by nobody else, as the placement journals are. Every file
 * felis-world writes for a caller, and the game's own, belong to the game's uid: neither can forge
 * one. A record read back is checked for every path rule before anything is done with it.
 *
 * @module
 */
import fs from 'node:fs';
import { TRASH_ID } from '../../lib/protocol/trash-env.ts';
import type { Content } from '../runtime/withheld.ts';
import { atPath, errCode, isNotExist } from '../volume/root.ts';
import type { Guard } from './count.ts';

export const RECORD_FILE = 'record.json';

/**
 * `moving`: the op is moving its items in (an item is in the trash iff its slot exists);
 * `held`: every item listed is in its slot; `restoring`: a restore is putting them back at `dest`.
 */
export type RecordState = 'moving' | 'held' | 'restoring';

export interface RecordItem {
  /** Root-relative, as the kernel names it (no links): where it was. */
  path: string;
  kind: 'file' | 'dir' | 'link' | 'other';
  /** `<dev>:<ino>` of the entry: recovery tells a moved entry from another one of the same name. */
  id: string;
  bytes: number;
  entries: number;
  /** Its slot's name in the record's folder: the item's index when the record was begun. */
  slot: number;
  /**
   * What it held when it went in, when that was guarded (count.ts): the withheld file or one of its
   * contents (`secret`), or the root server.properties (`properties`). Such an item goes back only
   * where it was (restore.ts), and a listing shows no bytes for it.
   */
  guard?: Guard;
  /** `secret`: the withheld contents it holds, remembered again when it is put back. */
  withheld?: Content[];
}

export interface TrashRecord {
  v: 1;
  id: string;
  op: string;
  actor: string;
  /** Unix ms. */
  at: number;
  state: RecordState;
  /**
   * The op replaced its items with new content (a write, an upload, an extraction over them) rather
   * than removing them: recovery of an unfinished one puts an item back where its name is still free.
   */
  replace: boolean;
  items: RecordItem[];
  /** Its items were judged for guarded files when it was sealed (records made before that were not). */
  judged?: boolean;
  /** restoring: where each item goes, and the folders the restore makes (to be removed on a roll back). */
  dest?: string[];
  made?: string[];
}

/** The time in a record id. */
export function idTime(id: string): number {
  return parseInt(id.slice(0, 12), 16);
}

/** A new id for a record made at `ms`. */
export function newId(ms: number, randomBytes: (n: number) => Buffer): string {
  return Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0').slice(-12) + randomBytes(2).toString('hex');
}

/** A path a record may name: relative, clean components, no `..`, `.`, NUL or empty component. */
export function isCleanRel(p: unknown): p is string {
  if (typeof p !== 'string' || p === '' || p.includes('\0') || p.length > 4096) return false;
  return p.split('/').every((c) => c !== '' && c !== '.' && c !== '..');
}

const KINDS = ['file', 'dir', 'link', 'other'];

function validItem(i: unknown): i is RecordItem {
  const it = i as RecordItem;
  return (
    typeof it === 'object' &&
    it !== null &&
    isCleanRel(it.path) &&
    KINDS.includes(it.kind) &&
    typeof it.id === 'string' &&
    /^\d+:\d+$/.test(it.id) &&
    Number.isSafeInteger(it.bytes) &&
    it.bytes >= 0 &&
    Number.isSafeInteger(it.entries) &&
    it.entries >= 0 &&
    Number.isSafeInteger(it.slot) &&
    it.slot >= 0 &&
    it.slot < 100_000 &&
    (it.guard === undefined || GUARDS.includes(it.guard)) &&
    (it.withheld === undefined || (Array.isArray(it.withheld) && it.withheld.length <= 64 && it.withheld.every(validContent)))
  );
}

const GUARDS: readonly unknown[] = ['secret', 'properties'];

function validContent(c: unknown): c is Content {
  const t = c as Content;
  return typeof t === 'object' && t !== null && Number.isSafeInteger(t.size) && t.size > 0 && (t.sha256 === null || (typeof t.sha256 === 'string' && /^[0-9a-f]{64}$/.test(t.sha256)));
}

/** The checks a record read back must pass: otherwise it is not ours and is never acted on. */
export function validRecord(r: unknown, id: string): r is TrashRecord {
  const t = r as TrashRecord;
  if (typeof t !== 'object' || t === null || t.v !== 1 || t.id !== id || !TRASH_ID.test(t.id)) return false;
  if (typeof t.op !== 'string' || typeof t.actor !== 'string' || !Number.isSafeInteger(t.at)) return false;
  if (!['moving', 'held', 'restoring'].includes(t.state) || typeof t.replace !== 'boolean') return false;
  if (t.judged !== undefined && t.judged !== true) return false;
  if (!Array.isArray(t.items) || t.items.length > 100_000 || !t.items.every(validItem)) return false;
  if (t.state === 'restoring') {
    if (!Array.isArray(t.dest) || t.dest.length !== t.items.length || !t.dest.every(isCleanRel)) return false;
    if (!Array.isArray(t.made) || !t.made.every(isCleanRel)) return false;
  }
  return true;
}

/** A file of ours: a regular file owned by this program's user, writable by nobody else. */
function ownFile(p: string): boolean {
  const st = fs.lstatSync(p);
  const uid = process.geteuid?.() ?? st.uid;
  return st.isFile() && st.uid === uid && (st.mode & 0o022) === 0;
}

/** Reads the record in the folder `dirFd` (the record's own folder); null when it is not one of ours. */
export function readRecord(dirFd: number, id: string): TrashRecord | null {
  let text: string;
  try {
    if (!ownFile(atPath(dirFd, RECORD_FILE))) return null;
    text = fs.readFileSync(atPath(dirFd, RECORD_FILE), 'utf8');
  } catch (e) {
    if (isNotExist(e) || errCode(e) === 'ENOTDIR' || errCode(e) === 'ELOOP') return null;
    throw e;
  }
  let r: unknown;
  try {
    r = JSON.parse(text);
  } catch {
    return null;
  }
  return validRecord(r, id) ? r : null;
}

/**
 * Writes the record whole into its folder `dirFd`: a temporary name, fsync, rename, fsync of the
 * folder. After it returns the record says what it says, whatever stops the Job.
 */
export function writeRecord(dirFd: number, r: TrashRecord, fsync: (fd: number) => void): void {
  const tmp = atPath(dirFd, `${RECORD_FILE}.tmp`);
  const fd = fs.openSync(tmp, 'w', 0o600);
  try {
    fs.writeFileSync(fd, JSON.stringify(r));
    fsync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, atPath(dirFd, RECORD_FILE));
  fsync(dirFd);
}
