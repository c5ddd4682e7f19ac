/**
 * The receiving end of an upload's bytes: a socket's small chunks (16–64 KiB) gathered into blocks
 * of about 1 MiB, written with one `pwritev` per block (the chunks are not copied together), and
 * several blocks on their way to the disk while the next ones arrive and are hashed. Waiting for
 * each write before reading on would leave the socket idle half the time, and the sender with it;
 * and write-back starts as the bytes come, not all at the final sync.
 * @module
 */
import type { Hash } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';

export const BLOCK_BYTES = 1 << 20;
/** Bytes handed to the disk and not yet written: the most a receiver holds for a transfer. */
export const IN_FLIGHT_BYTES = 8 << 20;
/** Written bytes after which write-back to the disk is started. */
export const WRITE_BACK_BYTES = 8 << 20;

export interface Block {
  chunks: Buffer[];
  bytes: number;
}

/** Yields the source's chunks in groups of at least `size` bytes (the last may be smaller). */
export async function* blocks(source: AsyncIterable<Buffer>, size = BLOCK_BYTES): AsyncGenerator<Block> {
  let chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of source) {
    if (chunk.length === 0) continue;
    chunks.push(chunk);
    bytes += chunk.length;
    if (bytes >= size) {
      yield { chunks, bytes };
      chunks = [];
      bytes = 0;
    }
  }
  if (bytes > 0) yield { chunks, bytes };
}

/** `pwritev` until every byte is written (a regular file seldom takes less, but may). */
async function writeAll(fh: FileHandle, chunks: Buffer[], position: number): Promise<void> {
  let rest = chunks;
  let at = position;
  while (rest.length > 0) {
    let n = (await fh.writev(rest, at)).bytesWritten;
    if (n === 0) throw new Error('the disk took no bytes');
    at += n;
    while (rest.length > 0 && n >= rest[0]!.length) n -= rest.shift()!.length;
    if (n > 0) rest = [rest[0]!.subarray(n), ...rest.slice(1)];
  }
}

/**
 * Writes blocks one after another from `start`, at explicit positions, so they may be on their
 * way together. `write` returns as soon as the block is queued, unless `maxInFlight` bytes are
 * already queued; a failed write fails the next `write` or `flush`. Before the file is truncated
 * or removed after a failure, `settle` must be awaited: a late write would bring bytes back.
 */
export class BlockWriter {
  readonly #fh: FileHandle;
  readonly #max: number;
  readonly #writeBackEvery: number;
  readonly #start: number;
  #position: number;
  #inFlight = 0;
  #pending = new Set<Promise<void>>();
  #error: unknown;
  #unsynced = 0;
  #syncing: Promise<void> | undefined;

  /**
   * `writeBackEvery`: once this many bytes are written, a `fdatasync` starts in the background, so
   * the disk works while the transfer goes on and the caller's final sync has only the tail left.
   * Its outcome is not this writer's: the final sync reports what the disk could not keep.
   */
  constructor(fh: FileHandle, start: number, maxInFlight = IN_FLIGHT_BYTES, writeBackEvery = WRITE_BACK_BYTES) {
    this.#fh = fh;
    this.#start = start;
    this.#position = start;
    this.#max = maxInFlight;
    this.#writeBackEvery = writeBackEvery;
  }

  /** Bytes handed to this writer so far (queued or written). */
  get received(): number {
    return this.#position - this.#start;
  }

  /**
   * Writes `source` block by block, each chunk hashed into every one of `hashes` while its block
   * is on its way to the disk, then waits for every write. A block that would take the bytes past
   * `limit` throws `tooLong()` and is not written.
   */
  async receive(source: AsyncIterable<Buffer>, limit: number, hashes: Hash[], tooLong: () => Error): Promise<void> {
    for await (const block of blocks(source)) {
      if (this.received + block.bytes > limit) throw tooLong();
      const queued = this.write(block);
      for (const c of block.chunks) for (const h of hashes) h.update(c);
      await queued;
    }
    await this.flush();
  }

  async write(b: Block): Promise<void> {
    this.#throwIfFailed();
    const at = this.#position;
    this.#position += b.bytes;
    this.#inFlight += b.bytes;
    const p: Promise<void> = writeAll(this.#fh, b.chunks, at).then(
      () => {},
      (e: unknown) => {
        this.#error ??= e;
      },
    );
    const tracked = p.finally(() => {
      this.#inFlight -= b.bytes;
      this.#pending.delete(tracked);
      this.#unsynced += b.bytes;
      if (this.#unsynced >= this.#writeBackEvery && !this.#syncing && this.#error === undefined) {
        this.#unsynced = 0;
        this.#syncing = this.#fh.datasync().then(
          () => (this.#syncing = undefined),
          () => (this.#syncing = undefined),
        );
      }
    });
    this.#pending.add(tracked);
    while (this.#inFlight > this.#max && this.#pending.size > 0) await Promise.race(this.#pending);
    this.#throwIfFailed();
  }

  /** Waits for every queued write; throws the first failure. */
  async flush(): Promise<void> {
    await this.settle();
    this.#throwIfFailed();
  }

  /** Waits for every queued write (failed or not) and any write-back under way. */
  async settle(): Promise<void> {
    while (this.#pending.size > 0 || this.#syncing) await Promise.all([...this.#pending, this.#syncing]);
  }

  #throwIfFailed(): void {
    if (this.#error !== undefined) throw this.#error;
  }
}
