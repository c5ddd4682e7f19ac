/**
 * The serving mode of the file Job: an HTTP server on the Pod's own address that answers list,
 * read and search with exactly the Result a one-shot Job would print (the same `execute`, so the same guards,
 * redaction and limits), to callers bearing the Job's token. It stops on its own after an idle
 * period or its lifetime, whichever comes first, and on `stop()` (SIGTERM).
 *
 * Wire: `GET /list?path=<p>`, `GET /read?path=<p>` and `GET /search?path=<p>&q=<q>`, `Authorization: Bearer <token>`; an op's
 * query (`limit`, `after`, `q`, lib/protocol/op-query.ts) rides beside the path, as the one-shot
 * Job's flags of the same names do (400 `{error}` for a `limit` that is not a whole number). 200 carries
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
import { createHash, timingSafeEqual } from 'node:crypto';
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { OpQuery } from '../../lib/protocol/op-query.ts';
import { formatResultLine, RESULT_PREFIX, type Result } from '../../lib/protocol/result.ts';
import { Lifecycle, type StopReason } from './lifecycle.ts';

/** The ops a serving Job answers: the read-only ones. */
export const SERVE_OPS = ['list', 'read', 'search'] as const;
export type ServeOp = (typeof SERVE_OPS)[number];

/** One request's input: the path, and the op's query where the URL carries one. */
export interface ServeQuery extends OpQuery {
  path: string;
}

/**
 * The path and query of a request URL; a message instead when `limit` is not a whole number of
 * at least 1 (the op judges its own upper bound, as it does for the one-shot Job's flag).
 */
export function serveQueryOf(params: URLSearchParams): ServeQuery | string {
  const out: ServeQuery = { path: params.get('path') ?? '' };
  const limit = params.get('limit');
  if (limit !== null) {
    if (!/^[0-9]{1,9}$/.test(limit) || Number(limit) < 1) return 'limit must be a whole number of at least 1';
    out.limit = Number(limit);
  }
  const after = params.get('after');
  if (after !== null) out.after = after;
  const q = params.get('q');
  if (q !== null) out.q = q;
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

const HEX64 = /^[0-9a-f]{64}$/;

/** Does the `Authorization` header carry the token whose SHA-256 is `expected`? Constant time. */
export function bearerMatches(header: string | undefined, expected: Buffer): boolean {
  if (!header?.startsWith('Bearer ')) return false;
  const digest = createHash('sha256').update(header.slice('Bearer '.length)).digest();
  return digest.length === expected.length && timingSafeEqual(digest, expected);
}

/** The body of a result line: what the one-shot Job prints after the prefix, without the newline. */
export function resultBody(r: Result): string {
  return formatResultLine(r).slice(RESULT_PREFIX.length, -1);
}

/** Listens on `host:port`; resolves with the address once listening, rejects if it cannot. */
export function listenOn(server: http.Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}

/** A small JSON answer that is never cached: every serving mode's replies and refusals. */
export function send(res: http.ServerResponse, status: number, body: string, extra: Record<string, string> = {}): void {
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
    ...extra,
  });
  res.end(body);
}

export async function startServing(o: ServeOptions): Promise<Serving> {
  if (!HEX64.test(o.tokenSha256)) throw new Error('the token digest must be 64 lowercase hex characters');
  const expected = Buffer.from(o.tokenSha256, 'hex');
  const maxConcurrent = o.maxConcurrent ?? 8;
  let active = 0;
  let served = 0;
  let resolveStopped!: (v: { reason: StopReason; served: number }) => void;
  const stopped = new Promise<{ reason: StopReason; served: number }>((r) => (resolveStopped = r));

  // Loaded here, not at the top: every one-shot Job loads this module, and node:http is most of
  // its start-up time.
  const server = process.getBuiltinModule('node:http').createServer(
    {
      requestTimeout: o.requestTimeoutMs ?? 15_000,
      headersTimeout: Math.min(o.requestTimeoutMs ?? 15_000, 5_000),
      keepAliveTimeout: 5_000,
      maxHeaderSize: 8 << 10,
    },
    (req, res) => void handle(req, res),
  );
  server.maxConnections = o.maxConnections ?? 64;
  // A connection mid-request is closed once answered, and none outlives the request timeout.
  const life = new Lifecycle(server, { idleMs: o.idleMs, lifetimeMs: o.lifetimeMs, graceMs: o.requestTimeoutMs ?? 15_000, onStopped: (reason) => resolveStopped({ reason, served }) });

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    if (life.stopping) res.setHeader('connection', 'close');
    // The token first: a caller without it learns nothing about paths, methods or load.
    if (!bearerMatches(req.headers.authorization, expected)) {
      req.resume();
      return send(res, 401, '{"error":"unauthorized"}');
    }
    const url = new URL(req.url ?? '/', 'http://serve.invalid');
    const op = url.pathname.slice(1);
    if (!(SERVE_OPS as readonly string[]).includes(op)) {
      req.resume();
      return send(res, 404, '{"error":"not found"}');
    }
    if (req.method !== 'GET') {
      req.resume();
      return send(res, 405, '{"error":"method not allowed"}', { allow: 'GET' });
    }
    // Nothing here takes a body; refuse one rather than read it.
    if ((req.headers['content-length'] && req.headers['content-length'] !== '0') || req.headers['transfer-encoding']) {
      res.setHeader('connection', 'close');
      return send(res, 413, '{"error":"requests carry no body"}');
    }
    const query = serveQueryOf(url.searchParams);
    if (typeof query === 'string') return send(res, 400, JSON.stringify({ error: query }));
    if (active >= maxConcurrent) return send(res, 503, '{"error":"busy"}', { 'retry-after': '1' });
    active++;
    life.holdIdle();
    try {
      const result = await o.run(op as ServeOp, query);
      served++;
      send(res, 200, resultBody(result));
    } catch (e) {
      send(res, 500, JSON.stringify({ error: e instanceof Error ? e.message : String(e) }));
    } finally {
      active--;
      if (life.stopping) setImmediate(() => server.closeIdleConnections());
      else if (active === 0) life.armIdle();
    }
  }

  const address = await listenOn(server, o.port, o.host);
  life.armIdle();
  return { address, stopped, stop: (reason) => life.stop(reason) };
}
