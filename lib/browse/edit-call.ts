/**
 * One call to an edit session Pod: `POST http://<podIP>:<port>/op` with the Job's token and the
 * call's JSON (lib/protocol/edit-call.ts). Unlike a browse call, what a failure means depends on
 * whether the request can have reached the program, so each call has a connection of its own
 * (no keep-alive socket the Pod may close under it): a failure before the connection is made
 * changed nothing (`unsent`), one after it may have (`lost`).
 * @module
 */
import http from 'node:http';
import { EDIT_PATH, type EditCall, END_PATH, encodeEditCall } from '../protocol/edit-call.ts';
import { MAX_LOG_BYTES } from '../protocol/result.ts';

export type EditOutcome =
  | { kind: 'ok'; body: string }
  /** Nothing reached the Pod (refused, unreachable, no connection in time): nothing changed. */
  | { kind: 'unsent'; detail: string }
  /** The Pod answered without running the op (token, lease, busy, a call it does not take). */
  | { kind: 'refused'; status: number; detail: string }
  /**
   * No result from a call that reached the Pod: the program ended without one (500; it has
   * stopped), or the connection broke after the request left (`inFlight`: the change may still be
   * under way there).
   */
  | { kind: 'lost'; detail: string; inFlight: boolean };

export interface EditCallOptions {
  ip: string;
  port: number;
  token: string;
  call: EditCall;
  connectTimeoutMs?: number;
  /** Aborts the call: it then rejects with the signal's reason. */
  signal: AbortSignal;
}

export function callEdit(o: EditCallOptions): Promise<EditOutcome> {
  const body = Buffer.from(encodeEditCall(o.call));
  return new Promise((resolve, reject) => {
    let settled = false;
    let connected = false;
    const done = (v: EditOutcome | Error) => {
      if (settled) return;
      settled = true;
      o.signal.removeEventListener('abort', onAbort);
      if (v instanceof Error) reject(v);
      else resolve(v);
    };
    const req = http.request(
      {
        host: o.ip,
        port: o.port,
        path: EDIT_PATH,
        method: 'POST',
        agent: false,
        headers: { authorization: `Bearer ${o.token}`, 'content-type': 'application/json', 'content-length': body.length },
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > MAX_LOG_BYTES) {
            req.destroy();
            done({ kind: 'lost', detail: 'answer too large', inFlight: false });
            return;
          }
          chunks.push(c);
        });
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const status = res.statusCode ?? 0;
          if (status === 200) done({ kind: 'ok', body: text });
          else if (status === 500) done({ kind: 'lost', detail: text.slice(0, 1000), inFlight: false });
          else done({ kind: 'refused', status, detail: text.slice(0, 200) });
        });
        res.on('error', (err) => done({ kind: 'lost', detail: err.message, inFlight: true }));
      },
    );
    const onAbort = () => {
      req.destroy();
      done(o.signal.reason instanceof Error ? o.signal.reason : new Error('aborted'));
    };
    if (o.signal.aborted) return onAbort();
    o.signal.addEventListener('abort', onAbort, { once: true });
    req.on('socket', (socket) => {
      const t = setTimeout(() => {
        req.destroy();
        done({ kind: 'unsent', detail: 'connect timeout' });
      }, o.connectTimeoutMs ?? 300);
      socket.once('connect', () => {
        connected = true;
        clearTimeout(t);
      });
      socket.once('close', () => clearTimeout(t));
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      const detail = err.code ?? err.message;
      done(connected ? { kind: 'lost', detail, inFlight: true } : { kind: 'unsent', detail });
    });
    req.end(body);
  });
}

/** Tells an edit Pod to end (best effort: a Pod that does not answer ends at its idle period). */
export function endEdit(o: { ip: string; port: number; token: string }): Promise<void> {
  return new Promise((resolve) => {
    const req = http.request({ host: o.ip, port: o.port, path: END_PATH, method: 'POST', agent: false, headers: { authorization: `Bearer ${o.token}`, 'content-length': 0 }, timeout: 1000 }, (res) => {
      res.resume();
      res.on('end', () => resolve());
      res.on('error', () => resolve());
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve());
    req.end();
  });
}
