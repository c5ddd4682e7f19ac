/**
 * Recovery: what a Job that mounts a world read-write does before anything else. Every journal at
 * the world root (see journal.ts) is finished: `placing` rolls forward when every staged source is
 * still there (else back), `undoing` rolls back, and any other state only removes what is left. So
 * the next op of a world always starts from the tree before or after an interrupted placement.
 *
 * A journal that is not ours (unreadable, or naming a path no journal of ours would) is left alone.
 * One whose base folder is gone is removed: nothing of it is left to place or to put back. One
 * whose base is another folder now, or whose moves cannot all be undone, stops the op (an
 * infrastructure failure naming it): acting anyway could lose a file.
 *
 * @module
 */
import fs from 'node:fs';
import type { WorldRoot } from '../volume/root.ts';
import { atPath, errCode, fdPath, isNotExist } from '../volume/root.ts';
import { WORK_PREFIX } from '../volume/work-folder.ts';
import { folderId, Journal, JournalError, type JournalHeader, type JournalHooks, type JournalState } from './journal.ts';

export interface Recovered {
  journal: string;
  op: string;
  /** The interrupted op's id, when its journal has one. */
  id?: string;
  base: string;
  was: JournalState;
  /** What the tree is now: the op's result (`new`), the tree before it (`old`), or `gone` (its base folder was). */
  now: 'new' | 'old' | 'gone';
}

/** The journal folders at the root, by name (a root has few entries; only exact working names count). */
function journalNames(rootFd: number): string[] {
  const names: string[] = [];
  const d = fs.opendirSync(fdPath(rootFd));
  try {
    for (let e = d.readSync(); e; e = d.readSync()) {
      if (e.isDirectory() && e.name.startsWith(WORK_PREFIX) && /^\.felis-unzip-[0-9a-f]{12}$/.test(e.name)) names.push(e.name);
    }
  } finally {
    d.closeSync();
  }
  return names.sort();
}

/** Finishes every journal at the root of `root`. Returns what each one was and became. */
export function recoverAll(root: WorldRoot, hooks: JournalHooks): Recovered[] {
  const out: Recovered[] = [];
  for (const name of journalNames(root.fd)) {
    const header = Journal.read(root.fd, name);
    if (!header) continue;
    const r = recoverOne(root, name, header, hooks);
    if (r) out.push(r);
  }
  return out;
}

function recoverOne(root: WorldRoot, name: string, header: JournalHeader, hooks: JournalHooks): Recovered | null {
  const r = { journal: name, op: header.op, ...(header.id ? { id: header.id } : {}), base: header.base, was: header.state };
  let baseFd: number;
  try {
    baseFd = root.openDir(header.base === '' ? '.' : header.base);
  } catch (e) {
    if (!isNotExist(e) && errCode(e) !== 'ENOTDIR') throw e;
    fs.rmSync(atPath(root.fd, name), { recursive: true, force: true });
    return { ...r, now: 'gone' };
  }
  try {
    const j = Journal.load(root.fd, baseFd, name, header, hooks);
    if (!j.valid()) return null; // not ours: left alone
    if (folderId(baseFd) !== header.baseId) {
      throw new JournalError(`journal ${name} (${header.op} into ${header.base || '.'}) names a folder that has been replaced; it was left as it is`);
    }
    let now: 'new' | 'old';
    switch (header.state) {
      case 'placing':
        now = j.rollForward() === 'committed' ? 'new' : 'old';
        break;
      case 'undoing':
        j.rollBack();
        now = 'old';
        break;
      case 'committed':
        now = 'new';
        break;
      default: // staging, undone
        now = 'old';
    }
    j.finish();
    return { ...r, now };
  } finally {
    fs.closeSync(baseFd);
  }
}
