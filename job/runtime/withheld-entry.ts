/**
 * The withheld file's own entry (what `config/paper-global.yml` resolves to), for the rule that the
 * API does not orphan the file while other hard links to it exist: its delete, replace, or the
 * delete or move of a folder holding it, is refused (withheld.ts says which ops ask).
 *
 * @module
 */
import fs from 'node:fs';
import { SECRET_PATH } from '../volume/guard.ts';
import { dir, join, leadsOutside } from '../volume/pathutil.ts';
import { atPath, type Identity, identityOf, sameIdentity, type WorldRoot } from '../volume/root.ts';
import { MAX_WRITE_LINK_HOPS } from './types.ts';

/** Folders above the file's own looked at when judging whether a folder holds it. */
const MAX_ANCESTORS = 256;

/** The withheld file's own entry: the folder holding it, its name there, what it is. */
export interface WithheldEntry {
  dir: Identity;
  name: string;
  st: fs.BigIntStats;
  /** The folder holding it and every folder above it, up to the root (the root excluded). */
  folders: Identity[];
}

/**
 * The entry the withheld path resolves to (final links followed as a write follows them: relative,
 * inside the world, at most MAX_WRITE_LINK_HOPS), when it is a regular file; else null.
 */
export function withheldEntry(root: WorldRoot): WithheldEntry | null {
  let cur = SECRET_PATH;
  for (let hops = 0; hops <= MAX_WRITE_LINK_HOPS; hops++) {
    let parent;
    try {
      parent = root.parentOf(cur, 'lstat');
    } catch {
      return null;
    }
    try {
      if (parent.name === null) return null;
      const st = fs.lstatSync(parent.at(), { bigint: true });
      if (st.isSymbolicLink()) {
        const target = fs.readlinkSync(parent.at());
        if (target.startsWith('/')) return null;
        const next = join(dir(cur), target);
        if (leadsOutside(next)) return null;
        cur = next;
        continue;
      }
      if (!st.isFile()) return null;
      return { dir: identityOf(fs.fstatSync(parent.fd, { bigint: true })), name: parent.name, st, folders: foldersAbove(root, parent.fd) };
    } catch {
      return null;
    } finally {
      parent.close();
    }
  }
  return null;
}

/** Identities of `dirFd` and the folders above it, asked of the kernel by `..`, up to the root. */
export function foldersAbove(root: WorldRoot, dirFd: number): Identity[] {
  const rootId = identityOf(fs.fstatSync(root.fd, { bigint: true }));
  const out: Identity[] = [];
  let at = atPath(dirFd, '.');
  for (let i = 0; i < MAX_ANCESTORS; i++) {
    const id = identityOf(fs.statSync(at, { bigint: true }));
    if (sameIdentity(id, rootId)) return out;
    out.push(id);
    at = `${at}/..`;
  }
  return out;
}

/** The withheld file's entry when it has other links (the case the API refuses to orphan it in), else null. */
export function linkedEntry(root: WorldRoot): WithheldEntry | null {
  const e = withheldEntry(root);
  return e && e.st.nlink > 1n ? e : null;
}

/** Is `name` in the folder `dirFd` the entry `e`? */
export function isEntry(e: WithheldEntry | null, dirFd: number, name: string | Buffer | null): boolean {
  if (!e || name === null || name.toString() !== e.name) return false;
  try {
    return sameIdentity(identityOf(fs.fstatSync(dirFd, { bigint: true })), e.dir);
  } catch {
    return false;
  }
}

/** Does the folder with identity `id` hold the entry `e` (at any depth)? */
export function holdsEntry(e: WithheldEntry | null, id: Identity): boolean {
  return !!e && e.folders.some((f) => sameIdentity(f, id));
}

export function linkedMessage(name: string): string {
  return `${name} is or holds the proxy forwarding secret, which has other hard links; delete the other links to it first`;
}
