/**
 * Where a pull's bytes go: one file descriptor, written as the socket delivers them. Measured on a
 * loopback pull, a write stream (a threadpool round trip per write, the socket paused and resumed
 * around each) ran at half the speed of synchronous writes, which is what `curl -o` does. So the
 * chunks are gathered to about 1 MiB and written with one `writev` on the spot: while it runs, the
 * kernel's socket buffer holds what arrives, so memory stays bounded by the batch.
 *
 * The file must be durable before it is linked into place. Rather than one fsync of the whole file
 * at the end (which waits for every dirty page at once), a `fdatasync` is started in the background
 * every `syncEvery` bytes while writing goes on, so the kernel writes back as the download runs and
 * the final fsync (the caller's) flushes only the tail. At most one background sync runs at a time.
 *
 * @module
 */
import fs from 'node:fs';

export const BATCH_BYTES = 1 << 20;
export const SYNC_EVERY_BYTES = 32 << 20;

export interface SinkOptions {
  batchBytes?: number;
  syncEvery?: number;
  /** Tests: the background data sync (default `fs.fdatasync`). */
  fdatasync?: (fd: number, cb: (err: NodeJS.ErrnoException | null) => void) => void;
}

export class FileSink {
  readonly #fd: number;
  readonly #batchBytes: number;
  readonly #syncEvery: number;
  readonly #fdatasync: NonNullable<SinkOptions['fdatasync']>;
  #parts: Buffer[] = [];
  #pending = 0;
  #sinceSync = 0;
  #syncing: Promise<void> | undefined;
  #syncError: NodeJS.ErrnoException | undefined;
  /** Bytes handed to `write`, batched or written. */
  received = 0;
  /** Background syncs started (for the bench and tests). */
  syncs = 0;

  constructor(fd: number, opts: SinkOptions = {}) {
    this.#fd = fd;
    this.#batchBytes = opts.batchBytes ?? BATCH_BYTES;
    this.#syncEvery = opts.syncEvery ?? SYNC_EVERY_BYTES;
    this.#fdatasync = opts.fdatasync ?? fs.fdatasync;
  }

  /** Takes a chunk; writes the batch once it reaches the batch size. Throws the write's error. */
  write(chunk: Buffer): void {
    this.received += chunk.length;
    this.#parts.push(chunk);
    this.#pending += chunk.length;
    if (this.#pending >= this.#batchBytes) this.#flush();
  }

  /**
   * Writes what is batched and waits for a background sync still running; throws the write's error or
   * a background sync's (syscall `fsync`). The caller fsyncs after.
   */
  async end(): Promise<void> {
    if (this.#pending > 0) this.#flush();
    await this.settle();
    if (this.#syncError) throw this.#syncError;
  }

  /** Waits for a background sync still running (before the descriptor is closed, whatever happened). */
  async settle(): Promise<void> {
    await this.#syncing;
  }

  #flush(): void {
    let parts = this.#parts;
    const size = this.#pending;
    let left = size;
    this.#parts = [];
    this.#pending = 0;
    // writev may write less than asked (a signal, a disk about to say ENOSPC): go on from there.
    while (left > 0) {
      const n = fs.writevSync(this.#fd, parts);
      left -= n;
      if (left > 0) parts = rest(parts, n);
    }
    this.#sinceSync += size;
    if (this.#sinceSync >= this.#syncEvery && this.#syncing === undefined) {
      this.#sinceSync = 0;
      this.syncs++;
      // Its error is kept and thrown by `end`: the kernel reports a failed write-back to one sync
      // of a descriptor, so the final fsync on this one may not see it again.
      this.#syncing = new Promise<void>((resolve) =>
        this.#fdatasync(this.#fd, (err) => {
          this.#syncError ??= err ?? undefined;
          this.#syncing = undefined;
          resolve();
        }),
      );
    }
  }
}

/** What is left of `parts` after the first `n` bytes. */
function rest(parts: Buffer[], n: number): Buffer[] {
  let i = 0;
  while (n >= parts[i].length) n -= parts[i++].length;
  return [parts[i].subarray(n), ...parts.slice(i + 1)];
}
