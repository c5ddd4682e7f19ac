/**
 * What one trash slot holds: bytes of regular files and entries in all, counted through directory
 * fds without following a link. On the way, a second name of the withheld file (a hard link to the
 * file `config/paper-global.yml` names, which still has it) is removed for good rather than kept:
 * it holds the forwarding secret, and only the file's own name may (docs/withheld-file.md).
 *
 * @module
 */
import fs from 'node:fs';
import { bestEffort } from '../failure.ts';
import { atPath, fdPath, identityOf, sameIdentity, type Identity } from '../root.ts';
import { withheldEntry } from '../withheld.ts';
import type { OpContext } from '../types.ts';

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW } = fs.constants;
/** Folders deeper than this are counted as entries only: a hostile tree costs a bounded stack. */
const MAX_DEPTH = 512;

export interface Count {
  bytes: number;
  entries: number;
}

/** The withheld file's identity now, looked up once for all the slots of a record. */
export function secretIdentity(ctx: OpContext): Identity | null {
  const w = withheldEntry(ctx.root);
  return w ? identityOf(w.st) : null;
}

export function countTree(dirFd: number, name: string, secret: Identity | null): Count {
  const c: Count = { bytes: 0, entries: 0 };
  walk(dirFd, name, secret, c, 0);
  return c;
}

function walk(dirFd: number, name: string | Buffer, secret: Identity | null, c: Count, depth: number): void {
  let st: fs.BigIntStats;
  try {
    st = fs.lstatSync(atPath(dirFd, name), { bigint: true });
  } catch {
    return;
  }
  if (st.isFile() && secret && st.nlink > 1n && sameIdentity(identityOf(st), secret)) {
    bestEffort(() => fs.unlinkSync(atPath(dirFd, name)));
    return;
  }
  c.entries++;
  if (st.isFile()) c.bytes += Number(st.size);
  if (!st.isDirectory() || depth >= MAX_DEPTH) return;
  let fd: number;
  try {
    fd = fs.openSync(atPath(dirFd, name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  } catch {
    return;
  }
  try {
    const d = fs.opendirSync(fdPath(fd), { encoding: 'buffer' as BufferEncoding });
    try {
      for (let e = d.readSync() as unknown as fs.Dirent<Buffer> | null; e; e = d.readSync() as unknown as fs.Dirent<Buffer> | null) {
        walk(fd, e.name, secret, c, depth + 1);
      }
    } finally {
      d.closeSync();
    }
  } finally {
    fs.closeSync(fd);
  }
}
