/**
 * The target check: what the archive would land on. Only items whose parent folder already exists
 * on the server (as a real folder) are looked at: anything below a new folder is new. Type
 * conflicts (a folder onto a file or link, a file onto a folder, link or special file) refuse the
 * extraction even with overwrite; a file onto a regular file is a replacement, which needs
 * overwrite. Names arrive in sorted order (the plan's merge), so the conflicts list is a sorted
 * prefix of all replacements, kept within the bounds the result line allows.
 *
 * @module
 */
import fs from 'node:fs';
import type { Result } from '../../lib/protocol/result.ts';
import { linkedMessage, type WithheldEntry } from '../runtime/withheld.ts';
import { fail } from '../volume/failure.ts';
import { dir, join } from '../volume/pathutil.ts';
import { atPath, identityOf, isNotExist, sameIdentity } from '../volume/root.ts';

/** At most this many names in `conflicts`, ... */
export const MAX_CONFLICTS = 200;
/** ... and at most this many bytes of names, so the result line stays under 16 KiB. */
export const MAX_CONFLICT_BYTES = 8192;
/** Folder answers remembered at once (a cache, not the plan: misses are looked up again). */
const CACHE_LIMIT = 4096;
/** ... and at most this many characters of their names. */
const CACHE_CHARS = 256 << 10;

export class TargetCheck {
  readonly #destFd: number;
  readonly #destRel: string;
  /** Folder name → whether the server has a real folder there (below real folders). */
  #isServerDir = new Map<string, boolean>();
  #cacheChars = 0;
  #typeConflict: Result | undefined;
  #conflicts: string[] = [];
  #conflictBytes = 0;
  #listFull = false;
  #count = 0;
  readonly #linked: WithheldEntry | null;

  /**
   * `destFd` is the destination folder; `destRel` its root-relative name (for reported paths).
   * `linked`: the withheld file's entry while it has other links (withheld.ts), which no entry may replace.
   */
  constructor(destFd: number, destRel: string, linked: WithheldEntry | null = null) {
    this.#destFd = destFd;
    this.#destRel = destRel;
    this.#linked = linked;
  }

  #lstat(name: string): fs.Stats | null {
    try {
      return fs.lstatSync(atPath(this.#destFd, name));
    } catch (e) {
      if (isNotExist(e)) return null;
      throw e;
    }
  }

  #remember(name: string, yes: boolean): void {
    if (this.#isServerDir.size >= CACHE_LIMIT || this.#cacheChars >= CACHE_CHARS) {
      this.#isServerDir.clear();
      this.#cacheChars = 0;
    }
    if (!this.#isServerDir.has(name)) this.#cacheChars += name.length;
    this.#isServerDir.set(name, yes);
  }

  /** True when `folder` (relative to the destination) is a real folder reached through real folders. */
  #serverDir(folder: string): boolean {
    if (folder === '.') return true;
    const known = this.#isServerDir.get(folder);
    if (known !== undefined) return known;
    const yes = this.#serverDir(dir(folder)) && (this.#lstat(folder)?.isDirectory() ?? false);
    this.#remember(folder, yes);
    return yes;
  }

  #conflict(server: string, what: string, archiveHas: string): void {
    if (this.#typeConflict) return;
    this.#typeConflict = {
      ...fail('type_conflict', `${server} is ${what} on the server, and the archive has ${archiveHas} there; nothing was changed`),
      entry: server,
    };
  }

  visit(name: string, kind: 'file' | 'dir'): void {
    if (!this.#serverDir(dir(name))) return;
    const st = this.#lstat(name);
    const server = join(this.#destRel, name);
    if (kind === 'dir') {
      this.#remember(name, st?.isDirectory() ?? false);
      if (!st || st.isDirectory()) return;
      this.#conflict(server, st.isSymbolicLink() ? 'a link' : 'a file', 'a folder');
      return;
    }
    if (!st) return;
    if (st.isDirectory()) return this.#conflict(server, 'a folder', 'a file');
    if (st.isSymbolicLink()) return this.#conflict(server, 'a link', 'a file');
    if (!st.isFile()) return this.#conflict(server, 'a special file', 'a file');
    if (this.#linked && st.nlink > 1 && this.#isLinked(name)) {
      if (!this.#typeConflict) this.#typeConflict = { ...fail('withheld_linked', linkedMessage(server)), entry: server };
      return;
    }
    this.#count++;
    if (this.#listFull) return;
    const size = Buffer.byteLength(server);
    // The first name always fits; after that the list stops at the first name that does not.
    if (this.#conflicts.length > 0 && (this.#conflicts.length >= MAX_CONFLICTS || this.#conflictBytes + size > MAX_CONFLICT_BYTES)) {
      this.#listFull = true;
      return;
    }
    this.#conflicts.push(server);
    this.#conflictBytes += size;
  }

  /** Is `name` (below the destination, through real folders) the linked withheld file's own entry? */
  #isLinked(name: string): boolean {
    const e = this.#linked!;
    if (name.slice(name.lastIndexOf('/') + 1) !== e.name) return false;
    try {
      return sameIdentity(identityOf(fs.statSync(atPath(this.#destFd, dir(name)), { bigint: true })), e.dir);
    } catch {
      return true; // cannot tell: refuse rather than orphan it
    }
  }

  /** The refusal the server's state calls for, or null when the extraction may go ahead. */
  outcome(overwrite: boolean): Result | null {
    if (this.#typeConflict) return this.#typeConflict;
    if (this.#count > 0 && !overwrite) {
      return {
        ...fail('exists', `${this.#count} files in the archive already exist on the server; extract again with overwrite to replace them`),
        conflicts: this.#conflicts,
        conflict_count: this.#count,
      };
    }
    return null;
  }
}
