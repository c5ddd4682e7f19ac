/**
 * The shared job key for a single-machine run (`npm start`): generated once into the data
 * directory and kept there, so a restart (or a second process on the same data) derives the same
 * tokens and can still call the browse Pods that are up. On a cluster it comes from a Secret.
 * @module
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const JOB_KEY_FILE_NAME = 'job-key';

/** The key file in `dir`, created (mode 0600, never overwritten) when missing. */
export function ensureJobKeyFile(dir: string): string {
  const file = join(dir, JOB_KEY_FILE_NAME);
  try {
    writeFileSync(file, randomBytes(32), { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  return file;
}
