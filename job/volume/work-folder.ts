/**
 * The extraction's working folder, `<dest>/.felis-unzip-<12 hex>`, holding `new/` (the extracted
 * tree), `old/` (files moved aside by placement), the plan's sort runs and the journal. It is
 * removed at the end of every run; one left by a killed Job is removed by the next mutation in
 * the same folder (an extraction into it, a write, mkdir, delete or rename there). Only exact
 * names are removed, and only folders of ours: a real folder (never a link), mode 0700, owned by
 * the Job's user, as an extraction makes it. Lookalikes, and a folder of the world that happens to
 * have the name (an API mkdir makes 0755 folders for the game's user), are left alone.
 *
 * @module
 */
import fs from 'node:fs';
import { bestEffort } from './failure.ts';
import { atPath, fdPath } from './root.ts';

export { isWorkFolderName, WORK_PREFIX } from '../../lib/protocol/working-names.ts';

import { isWorkFolderName } from '../../lib/protocol/working-names.ts';

/** A working folder as an extraction makes it: a folder, 0700, the Job user's. */
function isOurs(st: fs.Stats): boolean {
  return st.isDirectory() && (st.mode & 0o777) === 0o700 && st.uid === (process.geteuid?.() ?? -1);
}

/** Removes the working folders a dead extraction left in the folder `dirFd`. Returns how many. */
export function removeStaleWorkFolders(dirFd: number): number {
  let removed = 0;
  const names: string[] = [];
  bestEffort(() => {
    const d = fs.opendirSync(fdPath(dirFd));
    try {
      for (let ent = d.readSync(); ent; ent = d.readSync()) if (isWorkFolderName(ent.name)) names.push(ent.name);
    } finally {
      d.closeSync();
    }
  });
  for (const n of names) {
    bestEffort(() => {
      if (!isOurs(fs.lstatSync(atPath(dirFd, n)))) return;
      // rm never follows links: a link with this name is removed itself, its target is untouched.
      fs.rmSync(atPath(dirFd, n), { recursive: true, force: true });
      removed++;
    });
  }
  return removed;
}
