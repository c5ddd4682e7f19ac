/**
 * A log follow's answer as Server-Sent Events: the follow Job's NDJSON (`{"id","line"}` per line,
 * `{"end":"lifetime"}` last; functions/files-tail/job/follow-serve.ts) relayed as one event per
 * line, `id: <inode>:<offset>` and one `data:` line holding the log line, a `: keepalive` comment
 * when nothing was sent for `keepaliveMs` (so proxies keep the stream), and a last
 * `event: end` with `data: {"reason":…}`: `lifetime` (the follow's ten minutes), `shutdown` (this
 * instance is stopping) or `ended` (the Job's stream ended otherwise). Pulled as the caller reads:
 * memory stays a chunk and a line. Pure but for the stream it is given (and, for the Response,
 * the process's stop signal).
 * @module
 */

import { stopping } from './stopping.ts';

export type FollowEndReason = 'lifetime' | 'shutdown' | 'ended';

/** How often a comment goes out on a quiet stream, so proxies and load balancers keep it. */
export const KEEPALIVE_MS = 15_000;

/** A line over this much JSON is no line the Job sends (16 KiB of text, escaped): the stream is ended. */
const MAX_PENDING = 1 << 20;

/**
 * SSE has no escape: a CR would end the `data:` line. A log line holds no LF; a lone CR inside one
 * is sent as U+240D (␍). Nothing else needs changing.
 */
export function lineEvent(id: string, line: string): string {
  return `id: ${id}\ndata: ${line.replaceAll('\r', '\u240d')}\n\n`;
}

export function endEvent(reason: FollowEndReason): string {
  return `event: end\ndata: ${JSON.stringify({ reason })}\n\n`;
}

export const KEEPALIVE = ': keepalive\n\n';

/** Reads one NDJSON object of the Job: a line, the end, or nothing this relay knows (skipped). */
function parsed(text: string): { id: string; line: string } | { end: FollowEndReason } | undefined {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return { end: 'ended' };
  }
  if (typeof v !== 'object' || v === null) return undefined;
  const o = v as Record<string, unknown>;
  if (typeof o.id === 'string' && /^[0-9:]{1,40}$/.test(o.id) && typeof o.line === 'string') return { id: o.id, line: o.line };
  if (o.end === 'lifetime') return { end: 'lifetime' };
  return undefined;
}

export interface RelayOptions {
  keepaliveMs: number;
  /** Ends the stream with `shutdown` (the instance stops). */
  stop: AbortSignal;
  /**
   * Ends the stream with `lifetime` after this long, whatever the Job says: the request's own
   * limit (Knative's timeoutSeconds, from the request's start) must not cut it before its end event.
   */
  lifetimeMs?: number;
  /**
   * Ends the source at once (destroys the Job's answer, a hang-up to the Job). Needed beside the
   * iterator's `return`, which waits for a read still pending: on a quiet log, for ever.
   */
  close: () => void;
}

/**
 * The SSE frames of `source` (the Job's answer, read as it comes), ending with an end event. The
 * source is closed however the relay ends, which hangs up on the Job.
 */
export async function* followEvents(source: AsyncIterable<Uint8Array | string>, o: RelayOptions): AsyncGenerator<string> {
  const it = source[Symbol.asyncIterator]();
  const decoder = new TextDecoder();
  let rest = '';
  let stopped!: () => void;
  const stopping = new Promise<'stop'>((ok) => {
    stopped = () => ok('stop');
    if (o.stop.aborted) ok('stop');
    else o.stop.addEventListener('abort', stopped, { once: true });
  });
  let pending: Promise<IteratorResult<Uint8Array | string> | 'failed'> = it.next().catch(() => 'failed' as const);
  let lifeTimer: NodeJS.Timeout | undefined;
  const lifeOver = new Promise<'lifetime'>((ok) => {
    if (o.lifetimeMs !== undefined) lifeTimer = setTimeout(() => ok('lifetime'), Math.max(0, o.lifetimeMs));
  });
  try {
    for (;;) {
      let timer: NodeJS.Timeout | undefined;
      const tick = new Promise<'tick'>((ok) => (timer = setTimeout(() => ok('tick'), o.keepaliveMs)));
      const r = await Promise.race([pending, tick, stopping, lifeOver]);
      clearTimeout(timer);
      if (r === 'tick') {
        yield KEEPALIVE;
        continue;
      }
      if (r === 'stop') return yield endEvent('shutdown');
      if (r === 'lifetime') return yield endEvent('lifetime');
      if (r === 'failed' || r.done) return yield endEvent('ended');
      pending = it.next().catch(() => 'failed' as const);
      rest += typeof r.value === 'string' ? r.value : decoder.decode(r.value, { stream: true });
      let nl: number;
      while ((nl = rest.indexOf('\n')) >= 0) {
        const got = parsed(rest.slice(0, nl));
        rest = rest.slice(nl + 1);
        if (got === undefined) continue;
        if ('end' in got) return yield endEvent(got.end);
        yield lineEvent(got.id, got.line);
      }
      if (rest.length > MAX_PENDING) return yield endEvent('ended');
    }
  } finally {
    clearTimeout(lifeTimer);
    o.stop.removeEventListener('abort', stopped);
    o.close();
    it.return?.().catch(() => {});
  }
}

/** The frames as a byte stream for a Response; `onCancel` runs when the caller goes away (before the source is closed). */
export function followStream(frames: AsyncGenerator<string>, onCancel: () => void): ReadableStream<Uint8Array> {
  const enc = new TextEncoder();
  return new ReadableStream<Uint8Array>({
    async pull(ctrl) {
      const n = await frames.next();
      if (n.done) ctrl.close();
      else ctrl.enqueue(enc.encode(n.value));
    },
    async cancel() {
      onCancel();
      await frames.return(undefined);
    },
  });
}

/**
 * The answer of a follow: `source` (the follow Job's answer) relayed as events, ended at this
 * instance's stop (lib/http/stopping.ts). `hangUp` runs when the caller goes away.
 */
export function followResponse(source: AsyncIterable<Uint8Array | string> & { destroy(): void }, o: { worldState: string; requestId: string; hangUp: () => void; lifetimeMs: number }): Response {
  const frames = followEvents(source, { keepaliveMs: KEEPALIVE_MS, stop: stopping, close: () => source.destroy(), lifetimeMs: o.lifetimeMs });
  return new Response(followStream(frames, o.hangUp), {
    status: 200,
    headers: {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      // nginx-style proxies buffer an answer unless told not to.
      'x-accel-buffering': 'no',
      // `running`: the game may be writing the log (docs/routes.md, Reads while the server runs).
      'x-felis-world-state': o.worldState,
      'x-request-id': o.requestId,
    },
  });
}
