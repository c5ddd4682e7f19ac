/**
 * The withheld-file rule, in one place: which files on the world volume are the forwarding secret
 * (see docs/withheld-file.md). Every op that yields a file's bytes, size or digest asks
 * `withheldRule(root)`; one that adds a new way to get at bytes (a copy, a search) must too.
 *
 * A regular file is withheld when
 * - it has the identity (device + inode) of what `config/paper-global.yml` resolves to now, or
 * - its whole content has the size and SHA-256 of a withheld content: the file's current one, or
 *   one remembered in the ledger (every read-write Job records the content it sees, so a hard
 *   link left holding an old content after a replace, by us or by the game, is still caught).
 * A file is hashed only when its size equals a withheld size, so the cost is small. A withheld
 * content over MAX_HASHED_BYTES is remembered by size alone, and withholds every file of that size.
 *
 * And the API does not orphan the file while other links to it exist (withheld-entry.ts, re-exported
 * here): `linkedEntry` is the file's own entry when its link count is above one; its delete and
 * replace (or a delete of a folder holding it) are refused with `withheld_linked`, a move of any
 * folder holding it as managed; the other names stay ordinary, deletable.
 *
 * The ledger (withheld-ledger.ts) is `.felis-edit-withheld/ledger` at the world's root, read by
 * every Job, written by those that change the world (`rememberWithheld`, before their op).
 *
 * @module
 */

import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { bestEffort } from '../volume/failure.ts';
import { isSecretName, SECRET_PATH } from '../volume/guard.ts';
import { atPath, type Identity, identityOf, sameIdentity, type WorldRoot } from '../volume/root.ts';
import { MAX_READ_BYTES } from './types.ts';
import { type Content, MAX_LEDGER_ENTRIES, readFrom0, readLedger, writeLedger } from './withheld-ledger.ts';

export { holdsEntry, isEntry, linkedEntry, linkedMessage, type WithheldEntry, withheldEntry } from './withheld-entry.ts';
export { type Content, LEDGER_DIR, LEDGER_FILE, MAX_LEDGER_ENTRIES, parseLedger } from './withheld-ledger.ts';

const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK } = fs.constants;

/** Contents up to this size are compared by digest (the read limit: nothing larger is read whole). */
export const MAX_HASHED_BYTES = MAX_READ_BYTES;

export type Verdict = { withheld: true } | { withheld: false; bytes?: Buffer };

function sha256Hex(b: Buffer): string {
  return createHash('sha256').update(b).digest('hex');
}

/** The content of an open regular file, as the ledger records it; null for an empty file (it reveals nothing). */
function contentOf(fd: number, st: fs.BigIntStats): Content | null {
  if (st.size === 0n) return null;
  if (st.size > BigInt(MAX_HASHED_BYTES)) return { size: Number(st.size), sha256: null };
  const b = readFrom0(fd, MAX_HASHED_BYTES + 1);
  if (b.length === 0) return null;
  if (b.length > MAX_HASHED_BYTES) return { size: b.length, sha256: null };
  return { size: b.length, sha256: sha256Hex(b) };
}

/** The withheld file as it is now: its identity and content, or nulls when there is none. */
function current(root: WorldRoot): { id: Identity | null; content: Content | null } {
  let fd: number;
  try {
    fd = root.openFile(SECRET_PATH, O_RDONLY | O_NONBLOCK);
  } catch {
    return { id: null, content: null };
  }
  try {
    const st = fs.fstatSync(fd, { bigint: true });
    // A folder or a special file at the name holds no content; its identity still counts.
    return { id: identityOf(st), content: st.isFile() ? contentOf(fd, st) : null };
  } catch {
    return { id: null, content: null };
  } finally {
    fs.closeSync(fd);
  }
}

/** The rule for one run of an op. */
export class WithheldRule {
  /** Identity of what the withheld path resolves to now (links inside followed), or null. */
  readonly id: Identity | null;
  readonly #bySize = new Map<number, Set<string | null>>();

  constructor(id: Identity | null, contents: Content[]) {
    this.id = id;
    for (const c of contents) {
      let s = this.#bySize.get(c.size);
      if (!s) this.#bySize.set(c.size, (s = new Set()));
      s.add(c.sha256);
    }
  }

  isIdentity(id: Identity | null | undefined): boolean {
    return sameIdentity(id, this.id);
  }

  /** Must a regular file of this size have its bytes looked at? */
  needsBytes(size: number | bigint): boolean {
    return this.#bySize.has(Number(size));
  }

  /** Are these (a file's whole content) a withheld content? */
  isContent(bytes: Buffer): boolean {
    const s = this.#bySize.get(bytes.length);
    if (!s) return false;
    return s.has(null) || s.has(sha256Hex(bytes));
  }

  /**
   * The verdict on an open file (`st` describes it): by identity, else, for a regular file of a
   * withheld size, by its bytes read whole from the start. Those bytes come back with a "not
   * withheld" verdict: the caller sends them, not a second read, so what is sent is what was judged.
   */
  judge(fd: number, st: fs.BigIntStats): Verdict {
    if (this.isIdentity(identityOf(st))) return { withheld: true };
    if (!st.isFile() || !this.needsBytes(st.size)) return { withheld: false };
    if (st.size > BigInt(MAX_HASHED_BYTES)) return { withheld: true };
    const size = Number(st.size);
    const b = readFrom0(fd, size + 1);
    // Grown while it was judged: withheld rather than sent unjudged.
    if (b.length > size || this.isContent(b)) return { withheld: true };
    return { withheld: false, bytes: b };
  }

  /** The verdict on the entry `name` in `dirFd` (opened without following it); a file that cannot be opened is not withheld. */
  judgeAt(dirFd: number, name: string | Buffer, st: fs.BigIntStats): boolean {
    if (this.isIdentity(identityOf(st))) return true;
    if (!st.isFile() || !this.needsBytes(st.size)) return false;
    let fd: number;
    try {
      fd = fs.openSync(atPath(dirFd, name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
    } catch {
      return false; // gone or swapped for a link: it yields nothing here
    }
    return this.judgeOpened(fd);
  }

  /** The verdict on a path (links inside followed); a path that cannot be opened is not withheld. */
  judgePath(root: WorldRoot, name: string): boolean {
    let fd: number;
    try {
      fd = root.openFile(name, O_RDONLY | O_NONBLOCK);
    } catch {
      return false;
    }
    return this.judgeOpened(fd);
  }

  /** The verdict on a file this class opened; it closes it. A file that cannot be judged is withheld. */
  private judgeOpened(fd: number): boolean {
    try {
      return this.judge(fd, fs.fstatSync(fd, { bigint: true })).withheld;
    } catch {
      return true;
    } finally {
      fs.closeSync(fd);
    }
  }
}

/**
 * True when `name` is withheld under any spelling or link (symlinks followed inside the root, hard
 * links by identity, any file by a withheld content), or would be created as the withheld file. A
 * missing file counts by name alone, so the answer never tells whether it exists.
 */
export function isWithheldName(root: WorldRoot, name: string): boolean {
  if (isSecretName(name)) return true;
  const rule = withheldRule(root);
  return rule.isIdentity(root.identity(name, true)) || rule.isIdentity(root.identity(name, false)) || rule.judgePath(root, name);
}

const rules = new WeakMap<WorldRoot, WithheldRule>();

/** The rule for this open root (worked out once per root: one op's view of the world). */
export function withheldRule(root: WorldRoot): WithheldRule {
  let r = rules.get(root);
  if (!r) {
    const now = current(root);
    const contents = readLedger(root);
    if (now.content) contents.push(now.content);
    r = new WithheldRule(now.id, contents);
    rules.set(root, r);
  }
  return r;
}

/**
 * Records the withheld file's current content in the ledger (read-write Jobs, before their op).
 * Best effort and never throws: a ledger that cannot be written is only less memory. A planted
 * folder, link or special file at the ledger's names is removed (never followed) and rebuilt.
 */
export function rememberWithheld(root: WorldRoot): void {
  bestEffort(() => {
    const now = current(root).content;
    const known = readLedger(root);
    if (now === null || known.some((c) => c.size === now.size && c.sha256 === now.sha256)) {
      // Nothing new; a damaged ledger is rewritten only when there is something to remember.
      return;
    }
    const contents = [...known, now].slice(-MAX_LEDGER_ENTRIES);
    writeLedger(root, contents);
  });
}

/** The content of the regular file `name` in `dirFd` (not followed), as the ledger records it; null when there is none. */
export function contentAt(dirFd: number, name: string | Buffer): Content | null {
  let fd: number;
  try {
    fd = fs.openSync(atPath(dirFd, name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const st = fs.fstatSync(fd, { bigint: true });
    return st.isFile() ? contentOf(fd, st) : null;
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Adds `contents` to the ledger as its newest entries (a trash restore putting withheld contents
 * back into the world). Unlike `rememberWithheld` this throws when the ledger cannot be written:
 * the caller must not put such content back unremembered.
 */
export function rememberContents(root: WorldRoot, contents: readonly Content[]): void {
  if (contents.length === 0) return;
  const same = (a: Content, b: Content) => a.size === b.size && a.sha256 === b.sha256;
  const known = readLedger(root).filter((c) => !contents.some((n) => same(c, n)));
  writeLedger(root, [...known, ...contents].slice(-MAX_LEDGER_ENTRIES));
}
