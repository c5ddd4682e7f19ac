/**
 * Containment: every path the Job touches is resolved beneath the world root, like Go's `os.Root`.
 *
 * Design. Node has no openat/openat2, so the *at() calls are spelled as `/proc/self/fd/<dirfd>/<name>`:
 * the kernel resolves `/proc/self/fd/<dirfd>` to the very directory the fd holds (by object, not by
 * name) and then looks up one `name` inside it. A path is walked one component at a time: each
 * directory is opened with O_DIRECTORY|O_NOFOLLOW relative to the fd of the previous one and pushed
 * on a stack of open fds; the final component is opened/lstat'ed/renamed/unlinked relative to the
 * top fd without following it (O_NOFOLLOW, or syscalls that never follow a final link). Symlinks
 * are never followed by the kernel: we read them (readlink on the fd path) and splice the target's
 * components into the rest of the walk, relative to the link's directory; absolute targets are
 * refused, `..` pops the stack lexically (never asked of the kernel) and popping past the root is
 * refused, as are absolute paths and NUL bytes. Hops are capped at MAX_SYMLINK_HOPS.
 *
 * Why it is TOCTOU-safe: no check is separate from its use. A name is looked up exactly once, in a
 * directory we already hold open, with no link following, so renaming or swapping anything above or
 * beside it after we opened it cannot redirect us: we keep operating on the objects we opened.
 * Limits: it needs Linux with /proc mounted (checked at open). A directory we hold stays "inside"
 * only while it stays under the root; moving it elsewhere needs a rename on the same mount, and the
 * world root is the PVC's mount point (a rename out of it fails with EXDEV), with the game server
 * stopped and writes serialised by the world lock. Link resolution is ours, so behaviour on exotic
 * names (non-UTF-8 bytes in link targets) is decoded lossily and fails closed (not found).
 *
 * @module
 */
import fs from 'node:fs';
import { getSystemErrorMessage } from 'node:util';
import { shownName } from '../../lib/protocol/names.ts';
// A cycle (working-files uses this module's fd paths); only called at run time, never at load.
import { isWorkingName } from '../../lib/protocol/working-names.ts';
import { LEADS_OUT, pathRefusal } from '../../lib/protocol/world-path.ts';

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW } = fs.constants;
const DIR_FLAGS = O_RDONLY | O_DIRECTORY | O_NOFOLLOW;

/**
 * Symbolic links followed in one resolution. Go's os.Root uses 8 (`rootMaxSymlinks`,
 * __POSIX_SYMLOOP_MAX), and the original program resolves through os.Root, so a longer chain is
 * refused here exactly as it is there.
 */
export const MAX_SYMLINK_HOPS = 8;

/**
 * errno names → what they mean to a caller, in plain words after the caller's path: the one place
 * a system error becomes words. No syscall name and no `/proc/self/fd/…` path reaches a message.
 */
const PLAIN: Record<string, string> = {
  ENOENT: 'does not exist',
  ENOTDIR: 'is not a folder, or a name on the way to it is a file',
  EISDIR: 'is a folder, not a file',
  ELOOP: `goes through more than ${MAX_SYMLINK_HOPS} links in a row`,
  ENAMETOOLONG: 'has a name that is too long',
  EACCES: 'cannot be reached: permission denied',
  EPERM: 'cannot be changed: the operation is not permitted',
  EEXIST: 'already exists',
  ENOTEMPTY: 'is a folder that is not empty',
  EINVAL: 'is not a valid path for this',
  ENOSPC: "cannot be written: the server's volume is full",
  EDQUOT: "cannot be written: the server's volume quota is used up",
  EROFS: 'cannot be changed: the volume is read-only',
  EXDEV: 'cannot be moved across volumes',
  EBUSY: 'is in use',
  EMFILE: 'cannot be opened now: too many open files',
  ENFILE: 'cannot be opened now: too many open files',
  EIO: 'could not be read or written: the volume reported an input/output error',
  ETXTBSY: 'is in use',
  EBADF: 'could not be reached',
  EMLINK: 'has too many links',
  EFBIG: 'would be too large',
};

/**
 * A filesystem error in plain words naming the caller's path (`plugins/x.yml is a folder, not a
 * file`; an escape in the one path wording of lib/protocol/world-path.ts); `code` is the errno
 * name, `op` the step that failed (for the log, never the message).
 */
export class FsError extends Error {
  readonly code: string;
  readonly op: string;
  readonly path: string;
  constructor(code: string, op: string, path: string, reason: string) {
    super(code === ESCAPE ? pathRefusal(path, reason) : `${shownPath(path)} ${reason}`);
    this.name = 'FsError';
    this.code = code;
    this.op = op;
    this.path = path;
  }
}

/** A path as a message names it: the root as the world folder. */
export function shownPath(path: string): string {
  return path === '' || path === '.' ? 'the world folder' : shownName(path);
}

/** The code of a path escape (Go's errPathEscapes). */
export const ESCAPE = 'EESCAPE';

function escapeError(op: string, path: string): FsError {
  return new FsError(ESCAPE, op, path, LEADS_OUT);
}

/** The errno name of an error, if it has one. */
export function errCode(e: unknown): string | undefined {
  const c = (e as { code?: unknown } | null)?.code;
  return typeof c === 'string' ? c : undefined;
}

/** True for "does not exist" (ENOENT), the one error that is not a `bad_path`. */
export function isNotExist(e: unknown): boolean {
  return errCode(e) === 'ENOENT';
}

/** The plain words of an errno name (the system's own text, lowercased, for one not listed). */
export function plainReason(code: string, errno?: unknown): string {
  const plain = PLAIN[code];
  if (plain !== undefined) return plain;
  try {
    return `failed: ${(typeof errno === 'number' ? getSystemErrorMessage(errno) : code).toLowerCase()}`;
  } catch {
    return `failed: ${code.toLowerCase()}`;
  }
}

/**
 * Turns a Node fs error into an FsError labelled with the caller's path (never the internal
 * `/proc/self/fd/...` path). FsErrors and errors without an errno pass through unchanged.
 */
export function toFsError(e: unknown, op: string, path: string): unknown {
  if (e instanceof FsError) return e;
  const code = errCode(e);
  if (code === undefined || !/^E[A-Z0-9]+$/.test(code)) return e;
  const syscall = (e as { syscall?: unknown }).syscall;
  return new FsError(code, typeof syscall === 'string' ? syscall : op, path, plainReason(code, (e as { errno?: unknown }).errno));
}

/** An error's message as a caller may read it: a system error in the plain words above, naming `path`. */
export function plainMessage(e: unknown, path: string): string {
  const fe = toFsError(e, '', path);
  return fe instanceof Error ? fe.message : String(fe);
}

/** `/proc/self/fd/<fd>`: the directory (or file) an fd holds, as a path the kernel resolves by object. */
export function fdPath(fd: number): string {
  return `/proc/self/fd/${fd}`;
}

/** `/proc/self/fd/<dirFd>/<name>`: the *at() spelling. `name` must be one component. */
export function atPath(dirFd: number, name: string): string;
export function atPath(dirFd: number, name: Buffer): Buffer;
export function atPath(dirFd: number, name: string | Buffer): string | Buffer;
export function atPath(dirFd: number, name: string | Buffer): string | Buffer {
  if (typeof name === 'string') return `/proc/self/fd/${dirFd}/${name}`;
  return Buffer.concat([Buffer.from(`/proc/self/fd/${dirFd}/`), name]);
}

/** The root-relative name of the folder `fd` holds, as the kernel resolves it (no links), or null when outside. */
export function canonicalRel(rootFd: number, fd: number): string | null {
  const root = fs.readlinkSync(fdPath(rootFd));
  const p = fs.readlinkSync(fdPath(fd));
  if (p === root) return '';
  const prefix = root.endsWith('/') ? root : `${root}/`;
  return p.startsWith(prefix) ? p.slice(prefix.length) : null;
}

/** Is there an entry (of any kind, a link not followed) named `name` in the folder `dirFd`? */
export function existsAt(dirFd: number, name: string): boolean {
  try {
    fs.lstatSync(atPath(dirFd, name));
    return true;
  } catch (e) {
    if (isNotExist(e)) return false;
    throw e;
  }
}

/** A file identity (device and inode), what Go's os.SameFile compares. */
export interface Identity {
  dev: bigint;
  ino: bigint;
}

export function identityOf(st: fs.BigIntStats): Identity {
  return { dev: st.dev, ino: st.ino };
}

export function sameIdentity(a: Identity | null | undefined, b: Identity | null | undefined): boolean {
  return !!a && !!b && a.dev === b.dev && a.ino === b.ino;
}

/** Reads a link's target, or null when the entry is not a link (EINVAL). */
function readlinkOrNull(dirFd: number, name: string): string | null {
  try {
    return fs.readlinkSync(atPath(dirFd, name));
  } catch (e) {
    if (errCode(e) === 'EINVAL') return null;
    throw e;
  }
}

function closeQuietly(fd: number): void {
  try {
    fs.closeSync(fd);
  } catch {
    // Already closed or never valid: nothing to release.
  }
}

type Step<T> = { value: T } | { link: string };

interface Walked<T> {
  value: T;
  /** The directory holding `name`, or the designated directory itself when `name` is null. */
  top: number;
  name: string | null;
  /** Directory fds opened by the walk (the root fd is never among them). */
  fds: number[];
}

/**
 * The directory that holds the final component of a path, kept open. `name` is null when the path
 * names a directory itself (".", "a/..", "a/"); `fd` is then that directory.
 * Close it when done; it never closes the root.
 */
export class Parent {
  readonly fd: number;
  readonly name: string | null;
  #fds: number[];
  constructor(fd: number, name: string | null, fds: number[]) {
    this.fd = fd;
    this.name = name;
    this.#fds = fds;
  }
  /** `/proc/self/fd/<fd>/<name>` for this entry (or another name in the same directory). */
  at(name: string | null = this.name): string {
    return name === null ? fdPath(this.fd) : atPath(this.fd, name);
  }
  close(): void {
    for (const fd of this.#fds.splice(0).reverse()) closeQuietly(fd);
  }
}

export interface WorldRootOptions {
  /**
   * Test-only hook, never set in production: called before each lookup step with the root-relative
   * component path about to be looked up ("a", then "a/x"), so a test can swap things between steps.
   */
  beforeStep?: (componentPath: string) => void;
}

/** The world root, opened once per run. Every method resolves beneath it; see the module note. */
export class WorldRoot {
  /** The root directory as given (statfs and diagnostics only; never used to resolve a path). */
  readonly dir: string;
  readonly #fd: number;
  readonly #beforeStep: ((componentPath: string) => void) | undefined;
  #closed = false;

  private constructor(dir: string, fd: number, opts: WorldRootOptions) {
    this.dir = dir;
    this.#fd = fd;
    this.#beforeStep = opts.beforeStep;
  }

  /** Opens the root directory. Throws (an infrastructure error) if it cannot, or if /proc is missing. */
  static open(dir: string, opts: WorldRootOptions = {}): WorldRoot {
    const fd = fs.openSync(dir, O_RDONLY | O_DIRECTORY);
    try {
      const a = fs.fstatSync(fd, { bigint: true });
      let b: fs.BigIntStats | undefined;
      try {
        b = fs.statSync(fdPath(fd), { bigint: true });
      } catch {
        b = undefined;
      }
      if (!b || a.dev !== b.dev || a.ino !== b.ino) {
        throw new Error('/proc/self/fd is not available; the world root cannot be resolved safely');
      }
    } catch (e) {
      closeQuietly(fd);
      throw e;
    }
    return new WorldRoot(dir, fd, opts);
  }

  /** The root directory's fd (owned by the root; do not close it). */
  get fd(): number {
    return this.#fd;
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    closeQuietly(this.#fd);
  }

  /**
   * The core walk. `onName` is called for the final component (in the directory holding it) and
   * returns a value, or `{link}` when that component is a link to follow. `onDir` is called when the
   * path designates a directory itself. Intermediate components must be directories (links are
   * followed). On success the caller owns `fds`; on failure they are closed here.
   */
  #walk<T>(path: string, op: string, onName: (dirFd: number, name: string) => Step<T>, onDir: (dirFd: number) => T, finalMustBeDir = false): Walked<T> {
    if (this.#closed) throw new Error('world root is closed');
    if (path.includes('\0')) throw new FsError('EINVAL', op, path, 'holds a NUL byte');
    if (path === '') throw new FsError('EINVAL', op, path, 'is empty');
    if (path.startsWith('/')) throw escapeError(op, path);

    const queue = path.split('/').filter((s) => s !== '' && s !== '.');
    // A trailing "/" or "." (Go keeps a final ".") means the path must name a directory.
    const lastSeg = path.slice(path.lastIndexOf('/') + 1);
    let mustBeDir = finalMustBeDir || lastSeg === '' || lastSeg === '.';
    const fds: number[] = [];
    const names: string[] = [];
    let top = this.#fd;
    let hops = 0;
    try {
      while (queue.length > 0) {
        const c = queue.shift()!;
        if (c === '..') {
          if (fds.length === 0) throw escapeError(op, path);
          fs.closeSync(fds.pop()!);
          names.pop();
          top = fds.length > 0 ? fds[fds.length - 1] : this.#fd;
          continue;
        }
        // The ops' working names are not the world's: nothing is there, however the path got here.
        if (isWorkingName(c)) throw new FsError('ENOENT', op, path, PLAIN.ENOENT);
        this.#beforeStep?.(names.length > 0 ? `${names.join('/')}/${c}` : c);
        const last = queue.length === 0;
        let link: string | null = null;
        if (last && !mustBeDir) {
          const r = onName(top, c);
          if ('value' in r) return { value: r.value, top, name: c, fds };
          link = r.link;
        } else {
          let fd = -1;
          try {
            fd = fs.openSync(atPath(top, c), DIR_FLAGS);
          } catch (e) {
            // O_DIRECTORY|O_NOFOLLOW on a link fails with ENOTDIR (ELOOP on some paths): ask the
            // link itself; if it is not one, the original error stands.
            const code = errCode(e);
            if (code !== 'ENOTDIR' && code !== 'ELOOP') throw e;
            link = readlinkOrNull(top, c);
            if (link === null) throw e;
          }
          if (link === null) {
            fds.push(fd);
            names.push(c);
            top = fd;
            continue;
          }
        }
        hops++;
        if (hops > MAX_SYMLINK_HOPS) throw new FsError('ELOOP', op, path, PLAIN.ELOOP);
        if (link.startsWith('/') || link === '') throw escapeError(op, path);
        if (last && /(^|\/)\.?$/.test(link)) mustBeDir = true; // target "dir/" or "dir/." names a directory
        queue.unshift(...link.split('/').filter((s) => s !== '' && s !== '.'));
      }
      return { value: onDir(top), top, name: null, fds };
    } catch (e) {
      for (const fd of fds.reverse()) closeQuietly(fd);
      throw toFsError(e, op, path);
    }
  }

  /**
   * Resolves every component but the last (links followed) and keeps that directory open.
   * The last component is not followed: operate on it with `parent.at()`.
   */
  parentOf(path: string, op = 'openat'): Parent {
    const w = this.#walk<undefined>(
      path,
      op,
      () => ({ value: undefined }),
      () => undefined,
    );
    return new Parent(w.top, w.name, w.fds);
  }

  /**
   * Where content written at `path` lands: like `parentOf`, but a link at the final component is
   * followed too (a dangling one to the name it would create), as a write through it would.
   */
  landingOf(path: string, op = 'openat'): Parent {
    const w = this.#walk<undefined>(
      path,
      op,
      (dirFd, name) => {
        let link: string | null = null;
        try {
          link = readlinkOrNull(dirFd, name);
        } catch (e) {
          if (!isNotExist(e)) throw e;
        }
        return link === null ? { value: undefined } : { link };
      },
      () => undefined,
    );
    return new Parent(w.top, w.name, w.fds);
  }

  /**
   * The root-relative name, without links, of where content written at `path` lands (`landingOf`),
   * whether anything is there or not; null when it cannot be resolved inside the world.
   */
  landingPath(path: string): string | null {
    let landing: Parent;
    try {
      landing = this.landingOf(path);
    } catch {
      return null;
    }
    try {
      if (landing.name === null) return null;
      const dir = canonicalRel(this.#fd, landing.fd);
      if (dir === null) return null;
      return dir === '' ? landing.name : `${dir}/${landing.name}`;
    } finally {
      landing.close();
    }
  }

  /**
   * Opens a file, following links that stay inside. `flags` must not create (no O_CREAT): creation
   * goes through `parentOf`. A path naming a directory opens that directory with `flags`.
   */
  openFile(path: string, flags: number, op = 'openat', mustBeDir = false): number {
    const w = this.#walk<number>(
      path,
      op,
      (dirFd, name) => {
        try {
          return { value: fs.openSync(atPath(dirFd, name), flags | O_NOFOLLOW) };
        } catch (e) {
          if (errCode(e) !== 'ELOOP') throw e;
          const link = readlinkOrNull(dirFd, name);
          if (link === null) throw e;
          return { link };
        }
      },
      (dirFd) => fs.openSync(fdPath(dirFd), flags),
      mustBeDir,
    );
    for (const fd of w.fds.reverse()) closeQuietly(fd);
    return w.value;
  }

  /** Opens a directory, following links that stay inside. ENOTDIR when it is not one. */
  openDir(path: string, op = 'open'): number {
    return this.openFile(path, O_RDONLY | O_DIRECTORY, op, true);
  }

  /** lstat: the final component itself (a link is reported as a link). */
  lstat(path: string, op = 'lstat'): fs.BigIntStats {
    const w = this.#walk<fs.BigIntStats>(
      path,
      op,
      (dirFd, name) => ({ value: fs.lstatSync(atPath(dirFd, name), { bigint: true }) }),
      (dirFd) => fs.fstatSync(dirFd, { bigint: true }),
    );
    for (const fd of w.fds.reverse()) closeQuietly(fd);
    return w.value;
  }

  /** stat: links followed (inside the root only). */
  stat(path: string, op = 'stat'): fs.BigIntStats {
    const w = this.#walk<fs.BigIntStats>(
      path,
      op,
      (dirFd, name) => {
        const st = fs.lstatSync(atPath(dirFd, name), { bigint: true });
        if (!st.isSymbolicLink()) return { value: st };
        const link = readlinkOrNull(dirFd, name);
        // Swapped back to a non-link between lstat and readlink: take a fresh lstat.
        if (link === null) return { value: fs.lstatSync(atPath(dirFd, name), { bigint: true }) };
        return { link };
      },
      (dirFd) => fs.fstatSync(dirFd, { bigint: true }),
    );
    for (const fd of w.fds.reverse()) closeQuietly(fd);
    return w.value;
  }

  /** The identity of a path (links followed when `follow`), or null when it cannot be resolved. */
  identity(path: string, follow: boolean): Identity | null {
    try {
      return identityOf(follow ? this.stat(path) : this.lstat(path));
    } catch {
      return null;
    }
  }
}
