/**
 * Container logs as a kubelet keeps them (CRI log files): stdout and stderr merged in arrival order
 * into timestamped lines, a partial line held back until its newline (or 16 KiB, or the end), the
 * oldest lines dropped past a size bound; and the reader behind `GET /containerLogs`: `sinceTime`/
 * `sinceSeconds`, `tailLines`, `timestamps`, `limitBytes` (applied last) and `follow`.
 *
 * @module
 */

import { Readable } from 'node:stream';

export type StreamName = 'stdout' | 'stderr';

export interface LogLine {
  /** Receive time, Unix nanoseconds. */
  t: bigint;
  stream: StreamName;
  /** The bytes of the line, with its trailing newline when it had one. */
  data: Buffer;
}

/** CRI splits lines longer than this into partial records. */
const MAX_PARTIAL = 16 * 1024;
export const DEFAULT_MAX_LOG_BYTES = 16 * 1024 * 1024;

const hrBase = BigInt(Date.now()) * 1_000_000n - process.hrtime.bigint();

export function nowNanos(): bigint {
  return hrBase + process.hrtime.bigint();
}

/** RFC 3339 with exactly nine fractional digits (the kubelet's `timeFormatOut`). */
export function formatNanos(t: bigint): string {
  const ms = Number(t / 1_000_000n);
  const frac = (t % 1_000_000_000n).toString().padStart(9, '0');
  return `${new Date(ms).toISOString().slice(0, 19)}.${frac}Z`;
}

export class ContainerLog {
  private lines: LogLine[] = [];
  private bytes = 0;
  private readonly partial: Record<StreamName, Buffer[]> = { stdout: [], stderr: [] };
  private readonly listeners = new Set<(l: LogLine | null) => void>();
  private readonly maxBytes: number;
  private readonly sink: { write(line: LogLine): void; close(): void } | undefined;
  ended = false;

  /** With a `sink`, every line is also handed to it (the log files of a persistent node). */
  constructor(maxBytes = DEFAULT_MAX_LOG_BYTES, sink?: { write(line: LogLine): void; close(): void }) {
    this.maxBytes = maxBytes;
    this.sink = sink;
  }

  /** An ended log of lines read back (from the log files, after a restart). */
  static ofLines(lines: LogLine[], maxBytes = DEFAULT_MAX_LOG_BYTES): ContainerLog {
    const log = new ContainerLog(maxBytes);
    for (const l of lines) log.push(l);
    log.ended = true;
    return log;
  }

  private push(line: LogLine): void {
    this.sink?.write(line);
    this.lines.push(line);
    this.bytes += line.data.length;
    while (this.bytes > this.maxBytes && this.lines.length > 1) this.bytes -= this.lines.shift()!.data.length;
    for (const l of this.listeners) l(line);
  }

  write(stream: StreamName, chunk: Buffer): void {
    if (this.ended) return;
    let rest = chunk;
    for (;;) {
      const nl = rest.indexOf(0x0a);
      if (nl < 0) break;
      const parts = this.partial[stream];
      parts.push(rest.subarray(0, nl + 1));
      this.partial[stream] = [];
      this.push({ t: nowNanos(), stream, data: Buffer.concat(parts) });
      rest = rest.subarray(nl + 1);
    }
    if (rest.length) {
      this.partial[stream].push(Buffer.from(rest));
      const held = this.partial[stream].reduce((n, b) => n + b.length, 0);
      if (held >= MAX_PARTIAL) {
        this.push({ t: nowNanos(), stream, data: Buffer.concat(this.partial[stream]) });
        this.partial[stream] = [];
      }
    }
  }

  /** The container exited: flush partial lines and wake followers. */
  end(): void {
    if (this.ended) return;
    for (const s of ['stdout', 'stderr'] as const) {
      if (this.partial[s].length) this.push({ t: nowNanos(), stream: s, data: Buffer.concat(this.partial[s]) });
      this.partial[s] = [];
    }
    this.ended = true;
    this.sink?.close();
    for (const l of this.listeners) l(null);
    this.listeners.clear();
  }

  snapshot(): LogLine[] {
    return [...this.lines];
  }

  subscribe(l: (line: LogLine | null) => void): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }
}

export interface LogQuery {
  tailLines?: number;
  limitBytes?: number;
  timestamps?: boolean;
  follow?: boolean;
  previous?: boolean;
  sinceSeconds?: number;
  sinceTime?: string;
}

function format(line: LogLine, timestamps: boolean): Buffer {
  return timestamps ? Buffer.concat([Buffer.from(`${formatNanos(line.t)} `), line.data]) : line.data;
}

/** A readable of the log per the query; with `follow` it stays open until the container ends. */
export function readLog(log: ContainerLog, q: LogQuery): Readable {
  let since: bigint | undefined;
  if (q.sinceSeconds !== undefined) since = nowNanos() - BigInt(q.sinceSeconds) * 1_000_000_000n;
  if (q.sinceTime !== undefined) {
    const ms = Date.parse(q.sinceTime);
    if (!Number.isNaN(ms)) since = BigInt(ms) * 1_000_000n;
  }
  let lines = log.snapshot();
  if (since !== undefined) lines = lines.filter((l) => l.t >= since!);
  if (q.tailLines !== undefined) lines = q.tailLines === 0 ? [] : lines.slice(-q.tailLines);
  let budget = q.limitBytes ?? Number.POSITIVE_INFINITY;
  const timestamps = !!q.timestamps;

  let unsubscribe: (() => void) | undefined;
  const out = new Readable({
    read() {},
    destroy(err, cb) {
      unsubscribe?.();
      cb(err);
    },
  });
  /** Pushes within the byte budget; false once the budget is spent. */
  const emit = (line: LogLine): boolean => {
    if (budget <= 0) return false;
    let b = format(line, timestamps);
    if (b.length > budget) b = b.subarray(0, budget);
    budget -= b.length;
    out.push(b);
    return budget > 0;
  };
  let open = true;
  for (const l of lines) {
    if (!emit(l)) {
      open = false;
      break;
    }
  }
  if (!open || !q.follow || log.ended) {
    out.push(null);
    return out;
  }
  unsubscribe = log.subscribe((line) => {
    if (line === null || !emit(line)) {
      unsubscribe?.();
      out.push(null);
    }
  });
  return out;
}
