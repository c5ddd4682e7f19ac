/**
 * delete(path): removes a file, a link (never its target) or a folder with everything in it
 * (never the root). The recursion works on directory fds and never follows a link.
 *
 * @module
 */
import fs from 'node:fs';
import type { Result } from '../../lib/protocol/result.ts';
import { bestEffort, fail, failure } from '../failure.ts';
import { clean } from '../pathutil.ts';
import { atPath, errCode, fdPath, identityOf, type Parent } from '../root.ts';
import { holdsEntry, isEntry, linkedEntry, linkedMessage } from '../withheld.ts';
import { sweepStale } from '../working-files.ts';
import type { OpContext, OpRequest } from '../types.ts';

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

export function deleteOp(ctx: OpContext, req: OpRequest): Result {
  const name = clean(req.path);
  if (name === '.') return fail('bad_path', "the server's root folder cannot be deleted");
  let parent: Parent;
  try {
    parent = ctx.root.parentOf(name, 'lstat');
  } catch (e) {
    return failure(name, e, 'lstat');
  }
  try {
    if (parent.name === null) return fail('bad_path', "the server's root folder cannot be deleted");
    sweepStale(parent.fd);
    let st: fs.BigIntStats;
    try {
      st = fs.lstatSync(parent.at(), { bigint: true });
    } catch (e) {
      return failure(name, e, 'lstat');
    }
    // The withheld file (or a folder holding it) stays while other links to it exist: deleting it
    // would leave its content at them under ordinary names. The other links can go.
    const linked = linkedEntry(ctx.root);
    if (linked && (isEntry(linked, parent.fd, parent.name) || (st.isDirectory() && holdsEntry(linked, identityOf(st))))) {
      return fail('withheld_linked', linkedMessage(name));
    }
    try {
      removeAllAt(parent.fd, parent.name);
    } catch (e) {
      return failure(name, e, 'unlinkat');
    }
    bestEffort(() => ctx.fsync(parent.fd)); // the entry is gone either way
    return {};
  } finally {
    parent.close();
  }
}
