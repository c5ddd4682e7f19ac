/**
 * The embedded cluster's data directory holds what must stay the user's own: the cluster state
 * (every Job and Pod spec, so anything a caller sent that a spec carries), the job key that every
 * Job token and signed download derives from, the admin kubeconfig, and the API server's CA (its key
 * signs the certificate every kubeconfig trusts). The directory is made 0700
 * and those files 0600 at every start, also when an earlier run (or an older version) left them
 * readable to others. A link in their place is refused rather than followed: a chmod through it
 * would change another file, and SQLite would write its state there.
 * @module
 */
import fs from 'node:fs';
import { join } from 'node:path';

export const DIR_MODE = 0o700;
export const FILE_MODE = 0o600;
/** The files `npm start` keeps in FELIS_DATA that nobody else may read (SQLite's WAL and shared memory included). */
export const PRIVATE_FILES = ['cluster.sqlite', 'cluster.sqlite-wal', 'cluster.sqlite-shm', 'cluster.sqlite-journal', 'job-key', 'admin.kubeconfig', 'ca.crt', 'ca.key'];

const { O_RDONLY, O_CREAT, O_NOFOLLOW, O_NONBLOCK } = fs.constants;

/** Creates `dir` (and its parents) when missing and makes it 0700; refuses a link or a non-directory. */
export function privateDir(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: DIR_MODE });
  const st = fs.lstatSync(dir);
  if (!st.isDirectory()) throw new Error(`${dir} is not a directory (a link or a file is not used as the data directory)`);
  if ((st.mode & 0o777) !== DIR_MODE) fs.chmodSync(dir, DIR_MODE);
}

/**
 * Makes `file` 0600 when it exists (and, with `create`, creates it empty with that mode first), through
 * a descriptor opened without following a link. Refuses a link or anything but a regular file.
 */
export function privateFile(file: string, o: { create?: boolean } = {}): void {
  let fd: number;
  try {
    fd = fs.openSync(file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | (o.create ? O_CREAT : 0), FILE_MODE);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return;
    if (code === 'ELOOP') throw new Error(`${file} is a symbolic link; it is refused rather than followed`);
    throw err;
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw new Error(`${file} is not a regular file`);
    if ((st.mode & 0o777) !== FILE_MODE) fs.fchmodSync(fd, FILE_MODE);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Makes the files SQLite creates beside an open database (`-wal`, `-shm`, `-journal`) 0600 by
 * path, without opening them: this process holds the database's POSIX locks, and closing any
 * descriptor of a locked file would drop them. Only regular files (the directory is 0700 by now).
 */
export function privateSidecars(dbFile: string): void {
  for (const suffix of ['-wal', '-shm', '-journal']) {
    const f = dbFile + suffix;
    let st: fs.Stats;
    try {
      st = fs.lstatSync(f);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw err;
    }
    if (st.isFile() && (st.mode & 0o777) !== FILE_MODE) fs.chmodSync(f, FILE_MODE);
  }
}

/** The data directory 0700 and every private file in it that exists 0600. */
export function privateDataDir(dir: string): void {
  privateDir(dir);
  for (const name of PRIVATE_FILES) privateFile(join(dir, name));
}
