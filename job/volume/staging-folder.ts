/**
 * A staging folder of ours at the world root, opened so that nothing planted on the world volume
 * can redirect it: what an upload session (upload/session.ts) and a pull (functions/files-pull/job/pull-staging.ts) keep
 * their bytes in until they land. The folder is a direct child of the world root and may outlive
 * the process that made it; each use opens it afresh, relative to the world root's descriptor:
 *
 * - the folder with `O_DIRECTORY|O_NOFOLLOW` through `/proc/self/fd/<root fd>/<name>`, then checked
 *   by `fstat`: a folder, owned by this process's user, and (when the caller knows it) the very
 *   folder it made or found before (device and inode). A link, a file, or another folder at the
 *   name is not ours;
 * - every file in it through `/proc/self/fd/<folder fd>/<name>` with `O_NOFOLLOW|O_NONBLOCK`, then
 *   checked by `fstat`: a regular file with one link, owned by this process's user, and (when the
 *   caller knows it) the very file it made or found before. A link, a hard link, a FIFO, a socket or
 *   a device is not ours, and `O_NONBLOCK` means a FIFO cannot hang the open.
 *
 * Why `/proc/self/fd/<fd>/<name>` is an openat(fd, name): the kernel resolves `/proc/self/fd/<fd>`
 * to the object the descriptor holds (by object, not by the path it once had) and looks up the one
 * component `name` inside it; `O_NOFOLLOW` applies to that component. So a folder renamed or
 * replaced after it was opened cannot redirect a lookup, and a lookup never follows a planted link.
 * Changes go only through checked descriptors (`ftruncate`, `fchmod`, `fchown`, `pwritev`); a
 * caller that must act by name (an upload's commit renames `data`) checks with `stillIs` right
 * before that the name still is the checked file, and checks the target right after.
 *
 * Nothing but the Job's user can change what is inside the folder between those checks: it is 0700
 * and the Job's. The game's user can only replace the folder's name at the world root, which the
 * next open's folder check sees.
 *
 * The checks are the same for every caller; what differs is how a refusal reads and what it is:
 * each caller gives its `StagingTerms` (the words that name its folder and files, and its own
 * error for something that is not its own).
 *
 * @module
 */
import fs from 'node:fs';
import { removeAllAt } from './remove-all.ts';
import { atPath, errCode, type Identity, identityOf, sameIdentity } from './root.ts';

const { O_RDONLY, O_RDWR, O_WRONLY, O_CREAT, O_EXCL, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK } = fs.constants;
const DIR_FLAGS = O_RDONLY | O_DIRECTORY | O_NOFOLLOW;

/** How a caller names what it stages in its refusals, and what it throws for something not its own. */
export interface StagingTerms {
  /** The folder, as a refusal names it: "the upload's staging folder". */
  folder: string;
  /** A file in the folder, as a refusal names it: `the upload's ${name}`. */
  file(name: string): string;
  /** The caller's error for a folder or file at its names that is not its own, made with the refusal's message. */
  notOurs: new (
    message: string,
  ) => Error;
}

/** The staging folder does not exist (never made, or removed). */
export class StagingMissing extends Error {
  constructor() {
    super('no staging folder');
    this.name = 'StagingMissing';
  }
}

/** What a file must be besides a regular file. */
export interface FileChecks {
  /** The very file the caller made or found before. */
  expect?: Identity;
  /** Owned by this process's user (the default); off once the caller gave the file away. */
  owned?: boolean;
  /** Exactly one link (the default); off where the caller judges the links itself. */
  oneLink?: boolean;
}

const euid = () => process.geteuid?.() ?? -1;

/** An open's errors that say the name is no regular file. ELOOP: a link; ENXIO: a FIFO with no reader (write-only) or a socket; EISDIR: a folder. */
const NOT_REGULAR = new Set(['ELOOP', 'ENXIO', 'EISDIR', 'EOPNOTSUPP']);

/** The open staging folder for one use. Close it when done. */
export class StagingFolder {
  readonly fd: number;
  /** Its name at the world root. */
  readonly name: string;
  readonly identity: Identity;
  readonly #rootFd: number;
  readonly #terms: StagingTerms;

  private constructor(rootFd: number, name: string, fd: number, identity: Identity, terms: StagingTerms) {
    this.#rootFd = rootFd;
    this.name = name;
    this.fd = fd;
    this.identity = identity;
    this.#terms = terms;
  }

  /** Creates the folder (0700) at `name` in the root and opens it. EEXIST when anything is there. */
  static create(rootFd: number, name: string, terms: StagingTerms): StagingFolder {
    fs.mkdirSync(atPath(rootFd, name), { mode: 0o700 });
    return StagingFolder.open(rootFd, name, terms);
  }

  /**
   * Opens the folder at `name` in the root; `expect` is its identity once the caller knows it.
   * StagingMissing when nothing is there (and nothing is expected), the caller's error when
   * something else is.
   */
  static open(rootFd: number, name: string, terms: StagingTerms, expect?: Identity): StagingFolder {
    let fd: number;
    try {
      fd = fs.openSync(atPath(rootFd, name), DIR_FLAGS);
    } catch (e) {
      const code = errCode(e);
      if (code === 'ENOENT') {
        if (expect) throw new terms.notOurs(`${terms.folder} was removed`);
        throw new StagingMissing();
      }
      if (code === 'ENOTDIR' || code === 'ELOOP') throw new terms.notOurs(`${terms.folder} was replaced by something that is not a folder`);
      throw e;
    }
    try {
      const st = fs.fstatSync(fd, { bigint: true });
      if (!st.isDirectory()) throw new terms.notOurs(`${terms.folder} is not a folder`);
      if (Number(st.uid) !== euid()) throw new terms.notOurs(`${terms.folder} belongs to another user`);
      if (expect && !sameIdentity(identityOf(st), expect)) throw new terms.notOurs(`${terms.folder} was replaced`);
      return new StagingFolder(rootFd, name, fd, identityOf(st), terms);
    } catch (e) {
      fs.closeSync(fd);
      throw e;
    }
  }

  close(): void {
    fs.closeSync(this.fd);
  }

  at(name: string): string {
    return atPath(this.fd, name);
  }

  /** The caller's error for its file `name`: `why` says what is wrong with it. */
  #refused(name: string, why: string): Error {
    return new this.#terms.notOurs(`${this.#terms.file(name)} ${why}`);
  }

  /** Throws the caller's error unless `st` is a regular file that passes `checks` (one link, ours, by default). */
  #checkFile(st: fs.BigIntStats, name: string, checks: FileChecks = {}): void {
    if (!st.isFile()) throw this.#refused(name, 'is not a regular file');
    if (checks.oneLink !== false && st.nlink !== 1n) throw this.#refused(name, `has ${st.nlink} links`);
    if (checks.owned !== false && Number(st.uid) !== euid()) throw this.#refused(name, 'belongs to another user');
    if (checks.expect && !sameIdentity(identityOf(st), checks.expect)) throw this.#refused(name, 'was replaced');
  }

  /** Creates `name` (`mode`, 0600 by default), failing when anything is there. Returns the open descriptor. */
  createFile(name: string, flags = O_RDWR, mode = 0o600): number {
    const fd = fs.openSync(this.at(name), flags | O_CREAT | O_EXCL | O_NOFOLLOW, mode);
    try {
      this.#checkFile(fs.fstatSync(fd, { bigint: true }), name);
      return fd;
    } catch (e) {
      fs.closeSync(fd);
      throw e;
    }
  }

  /**
   * Opens `name`, which must be a regular file passing `checks` (one link, ours, by default).
   * ENOENT passes through; a link or a special file is not ours.
   */
  openFile(name: string, flags: number, checks?: FileChecks): { fd: number; st: fs.BigIntStats } {
    let fd: number;
    try {
      fd = fs.openSync(this.at(name), flags | O_NOFOLLOW | O_NONBLOCK);
    } catch (e) {
      if (NOT_REGULAR.has(errCode(e) ?? '')) throw this.#refused(name, 'is not a regular file');
      throw e;
    }
    try {
      const st = fs.fstatSync(fd, { bigint: true });
      this.#checkFile(st, name, checks);
      return { fd, st };
    } catch (e) {
      fs.closeSync(fd);
      throw e;
    }
  }

  /**
   * Opens `name` read-write as a FileHandle, for writes that must not block the process; checked
   * as `openFile` checks (`expect` the caller's own file, when given). A missing file is not ours
   * either: the caller made it.
   */
  async openHandle(name: string, expect?: Identity): Promise<fs.promises.FileHandle> {
    let fh: fs.promises.FileHandle;
    try {
      fh = await fs.promises.open(this.at(name), O_RDWR | O_NOFOLLOW | O_NONBLOCK);
    } catch (e) {
      const code = errCode(e) ?? '';
      if (NOT_REGULAR.has(code)) throw this.#refused(name, 'is not a regular file');
      if (code === 'ENOENT') throw this.#refused(name, 'was removed');
      throw e;
    }
    try {
      this.#checkFile(await fh.stat({ bigint: true }), name, { expect });
      return fh;
    } catch (e) {
      await fh.close().catch(() => {});
      throw e;
    }
  }

  /** Throws unless `name` in the folder is, right now, the file open as `fd` (its owner not checked). */
  stillIs(name: string, fd: number): void {
    let named: fs.BigIntStats;
    try {
      named = fs.lstatSync(this.at(name), { bigint: true });
    } catch {
      throw this.#refused(name, 'was removed');
    }
    const open = fs.fstatSync(fd, { bigint: true });
    this.#checkFile(named, name, { expect: identityOf(open), owned: false });
  }

  /** Reads `name` whole (at most `max` bytes), or undefined when it is not there. */
  readSmall(name: string, max: number): Buffer | undefined {
    let o: { fd: number; st: fs.BigIntStats };
    try {
      o = this.openFile(name, O_RDONLY);
    } catch (e) {
      if (errCode(e) === 'ENOENT') return undefined;
      throw e;
    }
    try {
      if (o.st.size > BigInt(max)) throw this.#refused(name, `is over ${max} bytes`);
      return fs.readFileSync(o.fd);
    } finally {
      fs.closeSync(o.fd);
    }
  }

  /**
   * Replaces `name` atomically with `bytes`: written to `<name>.tmp` (created afresh; a leftover
   * regular one of ours is removed first, anything else is not ours), then renamed over `name`.
   * A rename never follows a link at its target: a planted link there is replaced, not written.
   */
  replace(name: string, bytes: Buffer | string): void {
    const tmp = `${name}.tmp`;
    const left = fs.lstatSync(this.at(tmp), { bigint: true, throwIfNoEntry: false });
    if (left) {
      this.#checkFile(left, tmp);
      fs.unlinkSync(this.at(tmp));
    }
    const cur = fs.lstatSync(this.at(name), { bigint: true, throwIfNoEntry: false });
    if (cur) this.#checkFile(cur, name);
    const fd = this.createFile(tmp, O_WRONLY);
    try {
      fs.writeFileSync(fd, bytes);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(this.at(tmp), this.at(name));
  }

  /**
   * Removes the folder and everything in it without following a link. The entries go through
   * this folder's descriptor; the folder itself by name, only while the name still is this folder.
   */
  removeAll(): void {
    for (let round = 0; round < 4; round++) {
      const names = fs.readdirSync(atPath(this.fd, '.'), { encoding: 'buffer' });
      if (names.length === 0) break;
      for (const n of names) removeAllAt(this.fd, n);
    }
    const st = fs.lstatSync(atPath(this.#rootFd, this.name), { bigint: true, throwIfNoEntry: false });
    if (st?.isDirectory() && sameIdentity(identityOf(st), this.identity)) {
      try {
        fs.rmdirSync(atPath(this.#rootFd, this.name));
      } catch (e) {
        // Swapped for another (non-empty) folder since the check: not ours to remove.
        if (errCode(e) !== 'ENOENT' && errCode(e) !== 'ENOTEMPTY') throw e;
      }
    }
  }
}
