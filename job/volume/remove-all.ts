/**
 * Removing a name and everything under it through directory fds, never following a link: what a
 * delete does, and what the staging folders and the withheld ledger use to clear what they own.
 * @module
 */
import fs from 'node:fs';
import { atPath, errCode, fdPath } from './root.ts';

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW } = fs.constants;

/** Removes `name` in `dirFd`: unlink for anything but a directory, else empty it and rmdir. */
export function removeAllAt(dirFd: number, name: string | Buffer): void {
  try {
    fs.unlinkSync(atPath(dirFd, name));
    return;
  } catch (e) {
    const code = errCode(e);
    if (code === 'ENOENT') return;
    if (code !== 'EISDIR' && code !== 'EPERM') throw e;
  }
  let fd: number;
  try {
    fd = fs.openSync(atPath(dirFd, name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  } catch (e) {
    const code = errCode(e);
    if (code === 'ENOENT') return;
    // Swapped for a link or a file since the unlink: unlink that instead, never follow it.
    if (code === 'ENOTDIR' || code === 'ELOOP') {
      fs.unlinkSync(atPath(dirFd, name));
      return;
    }
    throw e;
  }
  try {
    // Deleting while iterating may skip entries, so read the whole list, delete, and look again.
    for (let round = 0; round < 16; round++) {
      const names = fs.readdirSync(fdPath(fd), { encoding: 'buffer' });
      if (names.length === 0) break;
      for (const n of names) removeAllAt(fd, n);
    }
  } finally {
    fs.closeSync(fd);
  }
  try {
    fs.rmdirSync(atPath(dirFd, name));
  } catch (e) {
    if (errCode(e) !== 'ENOENT') throw e;
  }
}
