/**
 * An upload session's staging folder, opened so that nothing planted on the world volume can
 * redirect it. The folder is a direct child of the world root and lives across many calls (and
 * receivers); each call opens it afresh, relative to the world root's descriptor:
 *
 * - the folder with `O_DIRECTORY|O_NOFOLLOW` through `/proc/self/fd/<root fd>/<name>`, then checked
 *   by `fstat`: a folder, owned by this process's user, and (once the session knows it) the very
 *   folder the session was begun or resumed in (device and inode). A link, a file, or another
 *   folder at the name is tampering;
 * - every file in it (`data`, `state.json`, `state.json.tmp`) through
 *   `/proc/self/fd/<folder fd>/<name>` with `O_NOFOLLOW|O_NONBLOCK`, then checked by `fstat`: a
 *   regular file with one link, owned by this process's user, and for `data` the very file the
 *   session created or resumed. A link, a hard link, a FIFO, a socket or a device is tampering,
 *   and `O_NONBLOCK` means a FIFO cannot hang the open.
 *
 * Why `/proc/self/fd/<fd>/<name>` is an openat(fd, name): the kernel resolves `/proc/self/fd/<fd>`
 * to the object the descriptor holds (by object, not by the path it once had) and looks up the one
 * component `name` inside it; `O_NOFOLLOW` applies to that component. So a folder renamed or
 * replaced after it was opened cannot redirect a lookup, and a lookup never follows a planted link.
 * Changes go only through checked descriptors (`ftruncate`, `fchmod`, `fchown`, `pwritev`); the one
 * call by name, the commit's rename of `data`, is preceded by a check that the name still is the
 * checked file and followed by a check that the target is it.
 *
 * Nothing but the Job's user can change what is inside the folder between those checks: it is 0700
 * and the Job's. The game's user can only replace the folder's name at the world root, which the
 * next call's folder check sees.
 *
 * @module
 */
import fs from 'node:fs';
import { atPath, errCode, identityOf, sameIdentity, type Identity } from '../root.ts';
import { removeAllAt } from '../remove-all.ts';

const { O_RDONLY, O_RDWR, O_WRONLY, O_CREAT, O_EXCL, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK } = fs.constants;
const DIR_FLAGS = O_RDONLY | O_DIRECTORY | O_NOFOLLOW;

/** Something on the world volume is not what the session left there: the session ends. */
export class StagingTampered extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StagingTampered';
  }
}

/** The staging folder does not exist (a session never begun, or removed). */
export class StagingMissing extends Error {
  constructor() {
    super('no staging folder');
    this.name = 'StagingMissing';
  }
}

const euid = () => process.geteuid?.() ?? -1;

/**
 * Throws unless `st` is a regular file with one link owned by this process's user (and `expect`,
 * when given). `owned: false` skips the owner: the commit gives `data` to the game's user first.
 */
function checkFile(st: fs.BigIntStats, what: string, expect?: Identity, owned = true): void {
  if (!st.isFile()) throw new StagingTampered(`the upload's ${what} is not a regular file`);
  if (st.nlink !== 1n) throw new StagingTampered(`the upload's ${what} has ${st.nlink} links`);
  if (owned && Number(st.uid) !== euid()) throw new StagingTampered(`the upload's ${what} belongs to another user`);
  if (expect && !sameIdentity(identityOf(st), expect)) throw new StagingTampered(`the upload's ${what} was replaced`);
}

/** The open staging folder for one call. Close it when the call is done. */
export class StagingFolder {
  readonly fd: number;
  readonly identity: Identity;
  readonly #rootFd: number;
  readonly #name: string;

  private constructor(rootFd: number, name: string, fd: number, identity: Identity) {
    this.#rootFd = rootFd;
    this.#name = name;
    this.fd = fd;
    this.identity = identity;
  }

  /** Creates the folder (0700) at `name` in the root and opens it. EEXIST when anything is there. */
  static create(rootFd: number, name: string): StagingFolder {
    fs.mkdirSync(atPath(rootFd, name), { mode: 0o700 });
    return StagingFolder.open(rootFd, name);
  }

  /**
   * Opens the folder at `name` in the root; `expect` is the session's folder identity once known.
   * StagingMissing when nothing is there, StagingTampered when something else is.
   */
  static open(rootFd: number, name: string, expect?: Identity): StagingFolder {
    let fd: number;
    try {
      fd = fs.openSync(atPath(rootFd, name), DIR_FLAGS);
    } catch (e) {
      const code = errCode(e);
      if (code === 'ENOENT') {
        if (expect) throw new StagingTampered("the upload's staging folder was removed");
        throw new StagingMissing();
      }
      if (code === 'ENOTDIR' || code === 'ELOOP') throw new StagingTampered("the upload's staging folder was replaced by something that is not a folder");
      throw e;
    }
    try {
      const st = fs.fstatSync(fd, { bigint: true });
      if (!st.isDirectory()) throw new StagingTampered("the upload's staging folder is not a folder");
      if (Number(st.uid) !== euid()) throw new StagingTampered("the upload's staging folder belongs to another user");
      if (expect && !sameIdentity(identityOf(st), expect)) throw new StagingTampered("the upload's staging folder was replaced");
      return new StagingFolder(rootFd, name, fd, identityOf(st));
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

  /** Creates `name` (0600), failing when anything is there. Returns the open descriptor. */
  createFile(name: string, flags = O_RDWR): number {
    const fd = fs.openSync(this.at(name), flags | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
    try {
      checkFile(fs.fstatSync(fd, { bigint: true }), name);
      return fd;
    } catch (e) {
      fs.closeSync(fd);
      throw e;
    }
  }

  /**
   * Opens `name`, which must be a regular file with one link of ours (and `expect`, when given).
   * ENOENT passes through; a link or a special file is tampering.
   */
  openFile(name: string, flags: number, expect?: Identity): { fd: number; st: fs.BigIntStats } {
    let fd: number;
    try {
      fd = fs.openSync(this.at(name), flags | O_NOFOLLOW | O_NONBLOCK);
    } catch (e) {
      const code = errCode(e);
      // ELOOP: a link; ENXIO: a FIFO with no reader (write-only) or a socket; EISDIR: a folder.
      if (code === 'ELOOP' || code === 'ENXIO' || code === 'EISDIR' || code === 'EOPNOTSUPP') throw new StagingTampered(`the upload's ${name} is not a regular file`);
      throw e;
    }
    try {
      const st = fs.fstatSync(fd, { bigint: true });
      checkFile(st, name, expect);
      return { fd, st };
    } catch (e) {
      fs.closeSync(fd);
      throw e;
    }
  }

  /** Throws unless `name` in the folder is, right now, the file open as `fd`. */
  stillIs(name: string, fd: number): void {
    let named: fs.BigIntStats;
    try {
      named = fs.lstatSync(this.at(name), { bigint: true });
    } catch {
      throw new StagingTampered(`the upload's ${name} was removed`);
    }
    const open = fs.fstatSync(fd, { bigint: true });
    checkFile(named, name, identityOf(open), false);
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
      if (o.st.size > BigInt(max)) throw new StagingTampered(`the upload's ${name} is over ${max} bytes`);
      return fs.readFileSync(o.fd);
    } finally {
      fs.closeSync(o.fd);
    }
  }

  /**
   * Replaces `name` atomically with `bytes`: written to `<name>.tmp` (created afresh; a leftover
   * regular one of ours is removed first, anything else is tampering), then renamed over `name`.
   * A rename never follows a link at its target: a planted link there is replaced, not written.
   */
  replace(name: string, bytes: Buffer | string): void {
    const tmp = `${name}.tmp`;
    const left = fs.lstatSync(this.at(tmp), { bigint: true, throwIfNoEntry: false });
    if (left) {
      checkFile(left, tmp);
      fs.unlinkSync(this.at(tmp));
    }
    const cur = fs.lstatSync(this.at(name), { bigint: true, throwIfNoEntry: false });
    if (cur) checkFile(cur, name);
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
    const st = fs.lstatSync(atPath(this.#rootFd, this.#name), { bigint: true, throwIfNoEntry: false });
    if (st?.isDirectory() && sameIdentity(identityOf(st), this.identity)) {
      try {
        fs.rmdirSync(atPath(this.#rootFd, this.#name));
      } catch (e) {
        // Swapped for another (non-empty) folder since the check: not ours to remove.
        if (errCode(e) !== 'ENOENT' && errCode(e) !== 'ENOTEMPTY') throw e;
      }
    }
  }
}

/**
 * Opens `name` in `folder` as a FileHandle for the session's writes, checked as `openFile` checks
 * (a regular file of ours with one link, the session's own when `expect` is given).
 */
export async function openHandle(folder: StagingFolder, name: string, expect?: Identity): Promise<fs.promises.FileHandle> {
  let fh: fs.promises.FileHandle;
  try {
    fh = await fs.promises.open(folder.at(name), O_RDWR | O_NOFOLLOW | O_NONBLOCK);
  } catch (e) {
    const code = errCode(e);
    if (code === 'ELOOP' || code === 'ENXIO' || code === 'EISDIR' || code === 'EOPNOTSUPP') throw new StagingTampered(`the upload's ${name} is not a regular file`);
    if (code === 'ENOENT') throw new StagingTampered(`the upload's ${name} was removed`);
    throw e;
  }
  try {
    checkFile(await fh.stat({ bigint: true }), name, expect);
    return fh;
  } catch (e) {
    await fh.close().catch(() => {});
    throw e;
  }
}
