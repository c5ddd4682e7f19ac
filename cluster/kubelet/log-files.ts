/**
 * Container logs on disk, as a node keeps them under `/var/log/pods`: one folder per Pod
 * (`<namespace>_<pod>_<uid>`), one per container, one file per container instance
 * (`<restartCount>.log`), each line in the CRI format `<RFC 3339 nano> <stream> <P|F> <bytes>`.
 * The persistent cluster (`npm start`) writes them so that a Pod's log, and with it the result line
 * a Job prints last, survives a restart of the service, as a real node's logs survive a restart of
 * its kubelet.
 *
 * Bounded as the kubelet's rotation bounds them: a file that would pass `maxBytes` is renamed to
 * `<n>.log.1` (replacing the one before) and a new one begun, so at most twice `maxBytes` stay on
 * disk per instance and always at least the last `maxBytes`, which hold the end of the log. Only the
 * current and the previous instance of a container are kept (what `previous=true` can ask for).
 * The folder goes with its Pod.
 *
 * Not fsynced, like the kubelet's: a write is in the page cache once `write(2)` returns, which
 * a crash of this process does not lose.
 *
 * @module
 */

import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { formatNanos, type LogLine, type StreamName } from './logs.ts';

/** Per file; two files per container instance at most. */
export const DEFAULT_LOG_FILE_BYTES = 1024 * 1024;

export interface PodLogDir {
  namespace: string;
  pod: string;
  uid: string;
  dir: string;
}

/** Where one container instance's lines go. */
export interface LogSink {
  write(line: LogLine): void;
  close(): void;
}

/** One CRI log line, with its newline; `F` for a full line, `P` for a part cut at 16 KiB or at the end. */
export function formatCriLine(line: LogLine): Buffer {
  const full = line.data.length > 0 && line.data[line.data.length - 1] === 0x0a;
  const body = full ? line.data.subarray(0, line.data.length - 1) : line.data;
  return Buffer.concat([Buffer.from(`${formatNanos(line.t)} ${line.stream} ${full ? 'F' : 'P'} `), body, Buffer.from('\n')]);
}

const CRI_PREFIX = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)\.(\d{9})Z (stdout|stderr) ([PF]) /;

/** Parses what `formatCriLine` wrote; a torn or foreign line (a crash mid-write) is skipped. */
export function parseCriLines(buf: Buffer): LogLine[] {
  const out: LogLine[] = [];
  let start = 0;
  while (start < buf.length) {
    const nl = buf.indexOf(0x0a, start);
    // A last line without its newline was torn by a crash: not a line.
    if (nl < 0) break;
    const raw = buf.subarray(start, nl);
    start = nl + 1;
    // The prefix is ASCII and at most 44 bytes: decode only that much.
    const m = CRI_PREFIX.exec(raw.subarray(0, 64).toString('latin1'));
    if (!m) continue;
    const secs = Date.parse(`${m[1]}Z`);
    if (Number.isNaN(secs)) continue;
    const t = BigInt(secs) * 1_000_000n + BigInt(m[2]!);
    const body = raw.subarray(m[0].length);
    out.push({ t, stream: m[3] as StreamName, data: m[4] === 'F' ? Buffer.concat([body, Buffer.from('\n')]) : Buffer.from(body) });
  }
  return out;
}

class RotatingFile implements LogSink {
  private fd: number | undefined;
  private size = 0;
  private readonly file: string;
  private readonly maxBytes: number;
  private readonly onError: (err: unknown) => void;

  constructor(file: string, maxBytes: number, onError: (err: unknown) => void) {
    this.file = file;
    this.maxBytes = maxBytes;
    this.onError = onError;
    this.fd = openSync(file, 'w');
  }

  write(line: LogLine): void {
    if (this.fd === undefined) return;
    const b = formatCriLine(line);
    try {
      if (this.size > 0 && this.size + b.length > this.maxBytes) {
        closeSync(this.fd);
        this.fd = undefined;
        renameSync(this.file, `${this.file}.1`);
        this.fd = openSync(this.file, 'w');
        this.size = 0;
      }
      writeSync(this.fd, b);
      this.size += b.length;
    } catch (err) {
      // A full disk must not stop the container: its log in memory goes on; the file stops here.
      this.close();
      this.onError(err);
    }
  }

  close(): void {
    if (this.fd === undefined) return;
    try {
      closeSync(this.fd);
    } catch {
      // already closed
    }
    this.fd = undefined;
  }
}

const POD_DIR = /^([a-z0-9.-]+)_([a-z0-9.-]+)_([0-9a-f-]+)$/;
const INSTANCE = /^(\d+)\.log$/;

export class PodLogFiles {
  readonly root: string;
  private readonly maxBytes: number;
  private readonly onError: (err: unknown) => void;

  constructor(root: string, opts: { maxBytes?: number; onError?: (err: unknown) => void } = {}) {
    this.root = root;
    this.maxBytes = opts.maxBytes ?? DEFAULT_LOG_FILE_BYTES;
    this.onError = opts.onError ?? (() => {});
  }

  dirOf(namespace: string, pod: string, uid: string): string {
    return join(this.root, `${namespace}_${pod}_${uid}`);
  }

  /**
   * A new file for instance `instance` of a container; the instances before the previous one are
   * removed. Undefined when the folder cannot be made (the log then lives in memory only).
   */
  open(namespace: string, pod: string, uid: string, container: string, instance: number): LogSink | undefined {
    const dir = join(this.dirOf(namespace, pod, uid), container);
    try {
      mkdirSync(dir, { recursive: true });
      for (const name of readdirSync(dir)) {
        const n = /^(\d+)\.log(\.1)?$/.exec(name);
        if (n && Number(n[1]) < instance - 1) rmSync(join(dir, name), { force: true });
      }
      return new RotatingFile(join(dir, `${instance}.log`), this.maxBytes, this.onError);
    } catch (err) {
      this.onError(err);
      return undefined;
    }
  }

  /** Every Pod folder there is (a folder of another shape is not ours and is left alone). */
  scan(): PodLogDir[] {
    let names: string[];
    try {
      names = readdirSync(this.root);
    } catch {
      return [];
    }
    const out: PodLogDir[] = [];
    for (const name of names) {
      const m = POD_DIR.exec(name);
      if (m) out.push({ namespace: m[1]!, pod: m[2]!, uid: m[3]!, dir: join(this.root, name) });
    }
    return out;
  }

  /**
   * The lines of a container's last instance (`previous`: the one before it), the rotated file
   * first; undefined when there is no such instance on disk.
   */
  read(dir: string, container: string, previous: boolean): LogLine[] | undefined {
    const cdir = join(dir, container);
    let instances: number[];
    try {
      instances = readdirSync(cdir)
        .map((n) => INSTANCE.exec(n))
        .filter((m): m is RegExpExecArray => !!m)
        .map((m) => Number(m[1]))
        .sort((a, b) => a - b);
    } catch {
      return undefined;
    }
    const n = instances[instances.length - (previous ? 2 : 1)];
    if (n === undefined) return undefined;
    const file = join(cdir, `${n}.log`);
    const parts: Buffer[] = [];
    for (const f of [`${file}.1`, file]) {
      try {
        parts.push(readFileSync(f));
      } catch {
        // no rotated file yet
      }
    }
    return parseCriLines(Buffer.concat(parts));
  }

  remove(dir: string): void {
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch (err) {
      this.onError(err);
    }
  }
}
