/**
 * The running SHA-256 of an upload session's data file, computed by a worker thread from the file
 * itself as parts are accepted.
 *
 * A session checks every byte twice: against its part's digest as it arrives, and in the whole
 * file's digest at the commit. Both passes on the receiver's one thread made it the slowest stage
 * of an upload (each pass costs about as much CPU as the rest of the receiving). The part's pass
 * stays on the main thread, where the part is refused before it is kept; the whole file's moves
 * here, fed only with parts already accepted, so a refused part never needs taking back out, and
 * it runs on the other core while the next part streams in. It reads the bytes back from the file
 * (the page cache: they were just written), so the digest is of what is on the disk.
 *
 * One worker serves the process, made on first use; it does not keep the process alive. A worker
 * that fails or is lost fails only `digest()`, and the caller computes the digest itself (see
 * `hashPrefix`): the thread is a speed-up, never a way for an upload to fail.
 * @module
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { Worker } from 'node:worker_threads';

/** The worker, as CommonJS source: small enough that shipping it as its own bundle is not worth it. */
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const fs = require('node:fs');
const states = new Map();
const buf = Buffer.allocUnsafe(${1 << 20});
parentPort.on('message', (m) => {
  if (m.t === 'add') {
    let s = states.get(m.id);
    if (!s) states.set(m.id, (s = { hash: createHash('sha256'), error: undefined }));
    try {
      for (let at = m.from; at < m.to && s.error === undefined; ) {
        const n = fs.readSync(m.fd, buf, 0, Math.min(buf.length, m.to - at), at);
        if (n === 0) throw new Error('the file ended before byte ' + m.to);
        s.hash.update(buf.subarray(0, n));
        at += n;
      }
    } catch (e) {
      s.error = String((e && e.message) || e);
    }
    parentPort.postMessage({ read: m.fd });
  } else if (m.t === 'digest') {
    const s = states.get(m.id);
    if (s && s.error !== undefined) parentPort.postMessage({ reply: m.reply, error: s.error });
    else parentPort.postMessage({ reply: m.reply, hex: (s ? s.hash.copy() : createHash('sha256')).digest('hex') });
  } else if (m.t === 'drop') {
    states.delete(m.id);
  }
});
`;

interface Reply {
  resolve: (hex: string) => void;
  reject: (e: Error) => void;
}

interface Thread {
  worker: Worker;
  replies: Map<number, Reply>;
  /** Descriptors handed over and not yet read: this thread closes them (a worker closing a descriptor it did not open is warned about). */
  fds: Set<number>;
  lost?: Error;
}

let current: Thread | undefined;
let ids = 0;
let replies = 0;

function thread(): Thread {
  if (current && !current.lost) return current;
  // No flags of the process's own (an `--input-type=module` would make this source a module).
  const worker = new Worker(WORKER_SOURCE, { eval: true, name: 'upload-digest', execArgv: [] });
  const t: Thread = { worker, replies: new Map(), fds: new Set() };
  worker.on('message', (m: { reply: number; hex?: string; error?: string } | { read: number }) => {
    if ('read' in m) {
      if (t.fds.delete(m.read)) fs.closeSync(m.read);
      return;
    }
    const r = t.replies.get(m.reply);
    t.replies.delete(m.reply);
    if (t.replies.size === 0) worker.unref();
    if (m.hex !== undefined) r?.resolve(m.hex);
    else r?.reject(new Error(`hashing the upload's data failed: ${m.error}`));
  });
  const lose = (e: Error) => {
    t.lost ??= e;
    if (current === t) current = undefined;
    for (const r of t.replies.values()) r.reject(t.lost);
    t.replies.clear();
    for (const fd of t.fds) fs.close(fd, () => {});
    t.fds.clear();
  };
  worker.on('error', lose);
  worker.on('exit', (code) => lose(new Error(`the hashing thread exited (code ${code})`)));
  // After the listeners: adding a 'message' listener refs the worker's port again.
  worker.unref();
  current = t;
  return t;
}

/** The SHA-256 of bytes [0, length) of `fd`, on this thread; throws `short()` if the file ends first. */
export function hashPrefix(fd: number, length: number, short: () => Error): string {
  const hash = createHash('sha256');
  const buf = Buffer.allocUnsafe(Math.min(1 << 20, Math.max(length, 1)));
  for (let at = 0; at < length; ) {
    const n = fs.readSync(fd, buf, 0, Math.min(buf.length, length - at), at);
    if (n === 0) throw short();
    hash.update(buf.subarray(0, n));
    at += n;
  }
  return hash.digest('hex');
}

/** The digest of a file's first `length` bytes, extended range by range, in order. */
export class FileDigest {
  readonly #id = ++ids;
  readonly #thread: Thread = thread();
  #length = 0;

  /** How many bytes from the start are (or are queued to be) in the digest. */
  get length(): number {
    return this.#length;
  }

  /**
   * Adds bytes [length, to) of the open file `fd` to the digest. Takes `fd` over: it is closed once
   * read, or when the thread is lost.
   */
  extend(fd: number, to: number): void {
    const from = this.#length;
    this.#length = to;
    if (this.#thread.lost) {
      fs.close(fd, () => {});
      return;
    }
    this.#thread.fds.add(fd);
    this.#thread.worker.postMessage({ t: 'add', id: this.#id, fd, from, to });
  }

  /** The hex digest of bytes [0, length): rejects if the thread failed to read them or was lost. */
  digest(): Promise<string> {
    const t = this.#thread;
    if (t.lost) return Promise.reject(t.lost);
    return new Promise((resolve, reject) => {
      const reply = ++replies;
      t.replies.set(reply, { resolve, reject });
      // Kept alive while an answer is awaited: nothing else may be holding the process open.
      t.worker.ref();
      t.worker.postMessage({ t: 'digest', id: this.#id, reply });
    });
  }

  /** Drops the digest's state in the thread. */
  release(): void {
    if (!this.#thread.lost) this.#thread.worker.postMessage({ t: 'drop', id: this.#id });
  }
}

/** Ends the shared thread (tests; a process ending needs no call). The next digest starts another. */
export async function stopDigestThread(): Promise<void> {
  const t = current;
  if (!t) return;
  current = undefined;
  await t.worker.terminate();
}
