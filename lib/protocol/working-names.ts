/**
 * The names the ops keep for their own working files and folders on the world volume. They are
 * judged by name alone, so the Job hides them from every op and the functions can refuse a path
 * through one before any Job exists.
 *
 * - `.felis-edit-<12 hex>`: a write's temporary file, or an upload session's or a pull's staging folder;
 * - `.felis-unzip-<12 hex>`: an extraction's working folder, a placement journal's folder, or the
 *   working folder at the world root into which a many-file delete moves its items aside;
 * - `.felis-edit-withheld`: the withheld-file ledger's folder (never swept as stale);
 * - `.felis-trash-<12 hex>`: where a many-file delete moves a folder (one atomic rename) before it
 *   removes it, so a Job stopped mid-removal leaves the folder gone, not half there;
 * - `.felis-edit-undo`: the undo trash at the world root, where what an op removes or replaces is
 *   kept (job/trash/). Dot-named, so the game and its plugins, which read named folders, pass it by.
 *
 * Exactly these names: a user's `.felis-edit-notes.txt` is an ordinary file.
 * @module
 */
export const EDIT_PREFIX = '.felis-edit-';
export const WORK_PREFIX = '.felis-unzip-';
export const LEDGER_DIR = '.felis-edit-withheld';
export const TRASH_PREFIX = '.felis-trash-';
export const UNDO_DIR = '.felis-edit-undo';

const EDIT_NAME = /^\.felis-edit-[0-9a-f]{12}$/;
const WORK_NAME = /^\.felis-unzip-[0-9a-f]{12}$/;
const TRASH_NAME = /^\.felis-trash-[0-9a-f]{12}$/;

/** A write's temporary file or an upload session's staging folder. */
export function isEditName(name: string): boolean {
  return EDIT_NAME.test(name);
}

/** An extraction's working folder or a placement journal's folder. */
export function isWorkFolderName(name: string): boolean {
  return WORK_NAME.test(name);
}

/** A many-file delete's folder of what it is removing. */
export function isTrashName(name: string): boolean {
  return TRASH_NAME.test(name);
}

/** Any of the ops' working names. */
export function isWorkingName(name: string): boolean {
  return isEditName(name) || name === LEDGER_DIR || name === UNDO_DIR || isWorkFolderName(name) || isTrashName(name);
}

/** True when any component of a slash-separated path is a working name. */
export function pathNamesWorkingFile(path: string): boolean {
  return path.split('/').some((c) => isWorkingName(c));
}
