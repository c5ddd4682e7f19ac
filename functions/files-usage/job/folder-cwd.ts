/**
 * FolderCwd: how the usage walk names an entry to lstat it, the nearest Node comes to fstatat.
 * The process's working folder is moved to the folder being read through that folder's own open
 * fd (`chdir("/proc/self/fd/<fd>")`: the kernel lands on the very folder the fd holds; the magic
 * link is not a path walked again), and an entry is then stat'ed by its bare name: one lookup of one
 * component, where `/proc/self/fd/<fd>/<name>` costs a walk through /proc each time (about a third
 * of the walk's time, bench/files-usage.bench.ts). The archive walk does the same
 * (job/archive/pack.ts); this one also gives the working folder back before each await, since
 * in a browse Pod other requests run between its steps.
 *
 * Containment is the fd's: the working folder is the folder opened with O_DIRECTORY|O_NOFOLLOW
 * below its parent's fd, and a name read from a folder is one component (never `..`, never with a
 * `/`), which lstat and an O_NOFOLLOW open do not follow; a folder renamed or swapped meanwhile
 * leaves the working folder where the fd is, as it leaves the fd.
 *
 * The working folder is process-wide: `home()` puts it back before anything else may run (the
 * walk calls it before each await, so a browse Pod's other requests, and another walk, never see
 * it moved) and at the end. The Job program names every file by an absolute path, so nothing
 * else depends on it meanwhile. Where chdir cannot be had (a worker thread, a folder without
 * search permission, no working folder to come back to), the name goes through /proc as before.
 * @module
 */
import { atPath, fdPath } from '../../../job/volume/root.ts';

export class FolderCwd {
  readonly #home: string | null;
  /** The folder (by its walk frame) the working folder is in for this walk, if any. */
  #owner: object | null = null;
  #there = false;

  constructor() {
    let home: string | null = null;
    try {
      home = process.cwd();
    } catch {
      // No working folder to come back to: never leave it.
    }
    this.#home = home;
  }

  /** The path that names `name` (latin1 text or its bytes) in the folder `owner` has open as `fd`. */
  at(owner: object, fd: number, name: string | Buffer): string | Buffer {
    if (this.#owner !== owner) {
      this.#owner = owner;
      this.#there = false;
      if (this.#home !== null) {
        try {
          process.chdir(fdPath(fd));
          this.#there = true;
        } catch {
          // Through /proc for this folder.
        }
      }
    }
    return this.#there ? name : atPath(fd, name);
  }

  /** Back to the working folder the process had: before an await, and when the walk ends. */
  home(): void {
    if (this.#there && this.#home !== null) {
      try {
        process.chdir(this.#home);
      } catch {
        // Gone meanwhile: the process names nothing by a relative path.
      }
    }
    this.#owner = null;
    this.#there = false;
  }
}
