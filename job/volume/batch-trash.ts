/**
 * A many-file delete removes a folder in two steps, so a Job stopped in between leaves it gone,
 * never half there: one rename moves it into `.felis-trash-<12 hex>` beside it (a folder made for
 * it, 0700, the Job user's: verifiably ours), then the trash is removed. Trash a dead Job left is
 * removed by the next mutation in that folder (job/runtime/working-files.ts `sweepStale`), only when it is
 * ours; the name is a working name, so nothing else ever sees it.
 *
 * @module
 */
import fs from 'node:fs';
import { isTrashName, TRASH_PREFIX } from '../../lib/protocol/working-names.ts';
import { bestEffort } from './failure.ts';
import { removeAllAt } from './remove-all.ts';
import { atPath, fdPath } from './root.ts';

/** A trash folder as a delete makes it: a folder, 0700, the Job user's. */
function isOurs(st: fs.Stats): boolean {
  return st.isDirectory() && (st.mode & 0o777) === 0o700 && st.uid === (process.geteuid?.() ?? -1);
}

/** Makes an empty trash folder in `dirFd`; returns its name. */
export function makeTrash(dirFd: number, randomBytes: (n: number) => Buffer): string {
  for (;;) {
    const name = TRASH_PREFIX + randomBytes(6).toString('hex');
    try {
      fs.mkdirSync(atPath(dirFd, name), 0o700);
      // mkdir's mode is masked by the umask; the sweep knows ours by exactly 0700.
      fs.chmodSync(atPath(dirFd, name), 0o700);
      return name;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
  }
}

/** Removes the trash a dead delete left in the folder `dirFd`. Best effort; returns how many went. */
export function removeStaleTrash(dirFd: number): number {
  const names: string[] = [];
  bestEffort(() => {
    const d = fs.opendirSync(fdPath(dirFd));
    try {
      for (let ent = d.readSync(); ent; ent = d.readSync()) if (isTrashName(ent.name)) names.push(ent.name);
    } finally {
      d.closeSync();
    }
  });
  let removed = 0;
  for (const n of names) {
    bestEffort(() => {
      if (!isOurs(fs.lstatSync(atPath(dirFd, n)))) return;
      removeAllAt(dirFd, n);
      removed++;
    });
  }
  return removed;
}
