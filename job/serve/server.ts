/**
 * The serving mode of the file Job: an HTTP server on the Pod's own address that answers list,
 * read, search and usage with exactly the Result a one-shot Job would print (the same `execute`, so the same guards,
 * redaction and limits), to callers bearing the Job's token. It stops on its own after an idle
 * period or its lifetime, whichever comes first, and on `stop()` (SIGTERM).
 *
 * Wire: `GET /list?path=<p>`, `GET /read?path=<p>`, `GET /search?path=<p>&q=<q>` (or `&text=<t>`) and
 * `GET /usage?path=<p>&depth=<d>&top=<n>`, `Authorization: Bearer <token>`; an op's
 * query (`limit`, `after`, `q`, `text`, `depth`, `top`, lib/protocol/op-query.ts) rides beside the path, as the one-shot
 * Job's flags of the same names do (400 `{error}` for a `limit`, `depth` or `top` that is not a whole number). 200 carries
 * the Result JSON as the result line would (zero fields omitted); a caller-fault outcome is a 200
 * too, with its `code`, exactly as the one-shot Job exits 0 with one. Anything else is the
 * server's own answer: 401 without the right token (before anything else is looked at), 404/405
 * for other paths and methods, 413 for a request with a body, 503 when full, 500 `{error}` for an
 * infrastructure failure (the root cannot be opened).
 *
 * Bounds: no request body is read at all, at most `maxConcurrent` requests run at once, headers
 * and whole requests time out, and the number of open connections is capped.
 *
 * @module
 */
import type { AddressInfo } from 'node:net';
import type { OpQuery } from '../../lib/protocol/op-query.ts';
import { SERVE_OPS, type ServeOp } from '../../lib/protocol/ops.ts';
import type { Result } from '../../lib/protocol/result.ts';
import { errorBody, resultBody, send } from '../http/answer.ts';
import { carriesBody } from '../http/body.ts';
import type { StopReason } from '../http/lifecycle.ts';
import { PodServer } from '../http/listen.ts';

/** One request's input: the path, and the op's query where the URL carries one. */
export interface ServeQuery extends OpQuery {
  path: string;
}

/**
 * The path and query of a request URL; a message instead when `limit`, `depth` or `top` is not a
 * whole number of at least 1 (the op judges its own upper bound, as it does for the one-shot Job's flag).
 */
export function serveQueryOf(params: URLSearchParams): ServeQuery | string {
  const out: ServeQuery = { path: params.get('path') ?? '' };
  // The op judges each number's upper bound, as it does for the one-shot Job's flag of the same name.
  for (const k of ['limit', 'depth', 'top'] as const) {
    const v = params.get(k);
    if (v === null) continue;
    if (!/^[0-9]{1,9}$/.test(v) || Number(v) < 1) return `${k} must be a whole number of at least 1`;
    out[k] = Number(v);
  }
  const after = params.get('after');
  if (after !== null) out.after = after;
  const q = params.get('q');
  if (q !== null) out.q = q;
  const text = params.get('text');
  if (text !== null) out.text = text;
  return out;
}

export interface ServeOptions {
  host: string;
  port: number;
  /** Hex SHA-256 of the token a caller must present; the token itself is never given to the Job. */
  tokenSha256: string;
  /** Runs one op; production passes `execute` bound to the world root. */
  run: (op: ServeOp, query: ServeQuery) => Promise<Result>;
  /** Stop after this long without a request. */
  idleMs: number;
  /** Stop this long after starting, however busy. */
  lifetimeMs: number;
  maxConcurrent?: number;
  maxConnections?: number;
  /** How long a request may take from its first byte to its answer. */
  requestTimeoutMs?: number;
}

export interface Serving {
  /** Where it listens (the port is the one asked for, or the one picked for port 0). */
  address: AddressInfo;
  /** Settles once stopped and every request answered. */
  stopped: Promise<{ reason: StopReason; served: number }>;
  stop(reason?: StopReason): void;
}

export async function startServing(o: ServeOptions): Promise<Serving> {
  const maxConcurrent = o.maxConcurrent ?? 8;
  let active = 0;
  let served = 0;
  // A connection mid-request is closed once answered, and none outlives the request timeout.
  const pod = new PodServer({
    tokenSha256: o.tokenSha256,
    requestTimeoutMs: o.requestTimeoutMs ?? 15_000,
    headersTimeoutMs: Math.min(o.requestTimeoutMs ?? 15_000, 5_000),
    maxConnections: o.maxConnections ?? 64,
    life: { idleMs: o.idleMs, lifetimeMs: o.lifetimeMs, graceMs: o.requestTimeoutMs ?? 15_000 },
  });
  const { life } = pod;
  for (const op of SERVE_OPS) {
    pod.route('GET', `/${op}`, async (req, res, url) => {
      // Nothing here takes a body; refuse one rather than read it.
      if (carriesBody(req)) {
        res.setHeader('connection', 'close');
        return send(res, 413, '{"error":"requests carry no body"}');
      }
      const query = serveQueryOf(url.searchParams);
      if (typeof query === 'string') return send(res, 400, errorBody(query));
      if (active >= maxConcurrent) return send(res, 503, '{"error":"busy"}', { 'retry-after': '1' });
      active++;
      life.holdIdle();
      try {
        const result = await o.run(op, query);
        served++;
        send(res, 200, resultBody(result));
      } finally {
        active--;
        if (life.stopping) setImmediate(() => pod.server.closeIdleConnections());
        else if (active === 0) life.armIdle();
      }
    });
  }
  const stopped = pod.stopped.then((reason) => ({ reason, served }));
  const address = await pod.listen(o.port, o.host);
  life.armIdle();
  return { address, stopped, stop: (reason) => life.stop(reason) };
}
