/**
 * The extraction's working folder, `<dest>/.felis-unzip-<12 hex>`, holding `new/` (the extracted
 * tree), `old/` (files moved aside by placement), the plan's sort runs and the journal. It is
 * removed at the end of every run; one left by a killed Job is removed by the next extraction
 * into the same folder. Only exact names are removed: lookalikes belong to the world.
 *
 * @module
 */
import fs from 'node:fs';
import { bestEffort } from '../failure.ts';
import { atPath, fdPath } from '../root.ts';

export const WORK_PREFIX = '.felis-unzip-';
const WORK_NAME = /^\.felis-unzip-[0-9a-f]{12}$/;

export function isWorkFolderName(name: string): boolean {
  return WORK_NAME.test(name);
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
      // rm never follows links: a link with this name is removed itself, its target is untouched.
      fs.rmSync(atPath(dirFd, n), { recursive: true, force: true });
      removed++;
    });
  }
  return removed;
}
