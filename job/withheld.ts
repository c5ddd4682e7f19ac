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
 * And the API does not orphan the file while other links to it exist: `linkedEntry` is the file's
 * own entry when its link count is above one; delete, replace and move of that entry (or of a folder
 * holding it) are refused with `withheld_linked` (the other names stay ordinary, deletable).
 *
 * The ledger is `.felis-edit-withheld/ledger` at the world's root: a working name, so no op lists,
 * addresses or packs it. It is read without following links, as a regular file with one link and a
 * bounded size; anything else is an empty ledger (never an error), and the next read-write Job
 * replaces it atomically. It holds digests only, never content.
 *
 * @module
 */
import fs from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import { bestEffort } from './failure.ts';
import { removeAllAt } from './ops/delete.ts';
import { isSecretName, SECRET_PATH } from './guard.ts';
import { dir, join, leadsOutside } from './pathutil.ts';
import { atPath, errCode, identityOf, sameIdentity, type Identity, type WorldRoot } from './root.ts';
import { MAX_READ_BYTES, MAX_WRITE_LINK_HOPS } from './types.ts';

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK, O_DIRECTORY } = fs.constants;

/** The ledger's folder at the world's root (a working name: see working-files.ts) and its file. */
export const LEDGER_DIR = '.felis-edit-withheld';
export const LEDGER_FILE = 'ledger';
/** Contents remembered; the oldest goes first. */
export const MAX_LEDGER_ENTRIES = 64;
/** A ledger larger than this is none of ours. */
const MAX_LEDGER_BYTES = 32 << 10;
/** Contents up to this size are compared by digest (the read limit: nothing larger is read whole). */
export const MAX_HASHED_BYTES = MAX_READ_BYTES;
/** Folders above the file's own looked at when judging whether a folder holds it. */
const MAX_ANCESTORS = 256;

/** One withheld content: its size and digest (null: too large to hash, withheld by size). */
export interface Content {
  size: number;
  sha256: string | null;
}

export type Verdict = { withheld: true } | { withheld: false; bytes?: Buffer };

function sha256Hex(b: Buffer): string {
  return createHash('sha256').update(b).digest('hex');
}

/** Reads from position 0 up to `max` bytes (stops at EOF). */
function readFrom0(fd: number, max: number): Buffer {
  const buf = Buffer.allocUnsafe(max);
  let n = 0;
  while (n < max) {
    const got = fs.readSync(fd, buf, n, max - n, n);
    if (got === 0) break;
    n += got;
  }
  return buf.subarray(0, n);
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

const HEX64 = /^[0-9a-f]{64}$/;

/** Parses a ledger; anything not exactly ours is empty. */
export function parseLedger(text: string): Content[] {
  try {
    const v = JSON.parse(text) as { v?: unknown; contents?: unknown };
    if (!v || v.v !== 1 || !Array.isArray(v.contents) || v.contents.length > MAX_LEDGER_ENTRIES) return [];
    const out: Content[] = [];
    for (const c of v.contents as Array<{ size?: unknown; sha256?: unknown }>) {
      if (!c || typeof c !== 'object' || !Number.isSafeInteger(c.size) || (c.size as number) <= 0) return [];
      if (!(c.sha256 === null || (typeof c.sha256 === 'string' && HEX64.test(c.sha256)))) return [];
      out.push({ size: c.size as number, sha256: c.sha256 as string | null });
    }
    return out;
  } catch {
    return [];
  }
}

/** The ledger's folder, opened without following a link, or -1. */
function openLedgerDir(root: WorldRoot): number {
  try {
    return fs.openSync(atPath(root.fd, LEDGER_DIR), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  } catch {
    return -1;
  }
}

/** The remembered contents: a regular file with one link, read whole, or nothing. Never throws. */
export function readLedger(root: WorldRoot): Content[] {
  const dfd = openLedgerDir(root);
  if (dfd < 0) return [];
  try {
    const fd = fs.openSync(atPath(dfd, LEDGER_FILE), O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
    try {
      const st = fs.fstatSync(fd);
      if (!st.isFile() || st.nlink !== 1 || st.size > MAX_LEDGER_BYTES) return [];
      const b = readFrom0(fd, MAX_LEDGER_BYTES + 1);
      return b.length > MAX_LEDGER_BYTES ? [] : parseLedger(b.toString('utf8'));
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return [];
  } finally {
    fs.closeSync(dfd);
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
    try {
      return this.judge(fd, fs.fstatSync(fd, { bigint: true })).withheld;
    } catch {
      return true;
    } finally {
      fs.closeSync(fd);
    }
  }

  /** The verdict on a path (links inside followed); a path that cannot be opened is not withheld. */
  judgePath(root: WorldRoot, name: string): boolean {
    let fd: number;
    try {
      fd = root.openFile(name, O_RDONLY | O_NONBLOCK);
    } catch {
      return false;
    }
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

/** Forgets the rule worked out for `root` (after the op itself changed the withheld file). */
export function forgetRule(root: WorldRoot): void {
  rules.delete(root);
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

function ledgerDirForWrite(root: WorldRoot): number {
  const at = atPath(root.fd, LEDGER_DIR);
  let fd = openLedgerDir(root);
  if (fd >= 0) return fd;
  let st: fs.Stats | undefined;
  try {
    st = fs.lstatSync(at);
  } catch (e) {
    if (errCode(e) !== 'ENOENT') throw e;
  }
  // A link or a file planted at the folder's name: the name goes, the target is never touched.
  if (st && !st.isDirectory()) fs.unlinkSync(at);
  fs.mkdirSync(at, 0o700);
  fd = openLedgerDir(root);
  if (fd < 0) throw new Error('the ledger folder cannot be opened');
  return fd;
}

function writeLedger(root: WorldRoot, contents: Content[]): void {
  const dfd = ledgerDirForWrite(root);
  try {
    // Leftovers of a Job that died mid-write, and anything planted here, go first.
    for (const n of fs.readdirSync(atPath(dfd, '.')).slice(0, 64)) {
      // fd by fd, never following a link (a path-based removal could be raced out of the folder).
      if (n !== LEDGER_FILE) bestEffort(() => removeAllAt(dfd, n));
    }
    const tmp = `${LEDGER_FILE}-${randomBytes(6).toString('hex')}`;
    const fd = fs.openSync(atPath(dfd, tmp), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
    try {
      fs.writeSync(fd, JSON.stringify({ v: 1, contents }));
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    try {
      // Replaces whatever is at the name (a planted link is replaced, not followed).
      fs.renameSync(atPath(dfd, tmp), atPath(dfd, LEDGER_FILE));
    } catch (e) {
      const code = errCode(e);
      if (code !== 'EISDIR' && code !== 'ENOTEMPTY' && code !== 'EEXIST') {
        bestEffort(() => fs.unlinkSync(atPath(dfd, tmp)));
        throw e;
      }
      // A folder planted at the ledger's name.
      removeAllAt(dfd, LEDGER_FILE);
      fs.renameSync(atPath(dfd, tmp), atPath(dfd, LEDGER_FILE));
    }
    bestEffort(() => fs.fsyncSync(dfd));
  } finally {
    fs.closeSync(dfd);
  }
}

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
function foldersAbove(root: WorldRoot, dirFd: number): Identity[] {
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
