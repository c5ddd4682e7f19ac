/**
 * One call to a browse Pod: `GET http://<podIP>:<port>/<op>?path=` (and the op's query, as the
 * one-shot Job's flags carry it) with the Job's token, over a
 * keep-alive connection pool, with a short connect timeout (an address nobody answers must not
 * hold up the fallback), an overall timeout, and a cap on the answer's size.
 * @module
 */
import http from 'node:http';
import { type OpQuery, queryString } from '../protocol/op-query.ts';
import type { ServeOp } from '../protocol/ops.ts';
import { MAX_LOG_BYTES } from '../protocol/result.ts';

/** The ops a browse Pod answers (their contracts' `serve`). */
export type BrowseOp = ServeOp;

export type CallOutcome =
  | { kind: 'ok'; body: string }
  /** Nothing listens there (yet): a Pod still starting, or one that has just stopped. */
  | { kind: 'unreachable'; detail: string }
  /** It answered, but not with a result (wrong token, busy, failure). */
  | { kind: 'status'; status: number; detail: string }
  | { kind: 'timeout' };

export interface CallOptions {
  ip: string;
  port: number;
  token: string;
  op: BrowseOp;
  path: string;
  /** The op's paging and filter; only the fields set are sent. */
  query?: OpQuery;
  timeoutMs: number;
  connectTimeoutMs?: number;
  signal?: AbortSignal;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 16, maxFreeSockets: 4, timeout: 5_000 });

export function callSession(o: CallOptions): Promise<CallOutcome> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const done = (v: CallOutcome | Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(overall);
      o.signal?.removeEventListener('abort', onAbort);
      if (v instanceof Error) reject(v);
      else resolve(v);
    };
    const req = http.request(
      {
        host: o.ip,
        port: o.port,
        path: `/${o.op}?path=${encodeURIComponent(o.path)}${queryString(o.query)}`,
        method: 'GET',
        agent,
        headers: { authorization: `Bearer ${o.token}` },
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > MAX_LOG_BYTES) {
            req.destroy();
            done({ kind: 'status', status: res.statusCode ?? 0, detail: 'answer too large' });
            return;
          }
          chunks.push(c);
        });
        res.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          if (res.statusCode === 200) done({ kind: 'ok', body });
          else done({ kind: 'status', status: res.statusCode ?? 0, detail: body.slice(0, 200) });
        });
        res.on('error', (err) => done({ kind: 'unreachable', detail: err.message }));
      },
    );
    const overall = setTimeout(() => {
      req.destroy();
      done({ kind: 'timeout' });
    }, o.timeoutMs);
    const onAbort = () => {
      req.destroy();
      done(o.signal!.reason instanceof Error ? o.signal!.reason : new Error('aborted'));
    };
    if (o.signal?.aborted) return onAbort();
    o.signal?.addEventListener('abort', onAbort, { once: true });
    req.on('socket', (socket) => {
      if (!socket.connecting) return;
      const t = setTimeout(() => {
        req.destroy();
        done({ kind: 'unreachable', detail: 'connect timeout' });
      }, o.connectTimeoutMs ?? 300);
      socket.once('connect', () => clearTimeout(t));
      socket.once('close', () => clearTimeout(t));
    });
    req.on('error', (err: NodeJS.ErrnoException) => done({ kind: 'unreachable', detail: err.code ?? err.message }));
    req.end();
  });
}
