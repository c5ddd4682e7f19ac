/**
 * Serving the functions over HTTP. `createHostApp` puts several functions' routes in one Hono app,
 * as an ingress in front of the separate Knative services would route them (`npm start`, the
 * end-to-end tests). `listen` serves an app so that every answer carries the envelope and an
 * X-Request-Id, including the ones Node or the adapter would otherwise give bare: a malformed
 * request line or header (400), headers too large (431), a Host header or request target that
 * does not make a URL (400), headers that take too long to arrive (408).
 *
 * The server's timeouts are chosen for Knative's queue-proxy in front of it: idle upstream
 * connections are kept open longer than queue-proxy keeps them (90 s), so queue-proxy never sends
 * a request on a connection Node has just closed (a POST or PUT there cannot be retried, and the
 * caller would see a 502); no timeout cuts a request whose body is still arriving (the Service's
 * `timeoutSeconds` and the routes' own idle limits bound those); only the headers have a short
 * limit of their own.
 * @module
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { getRequestListener, RequestError } from '@hono/node-server';
import type { Hono } from 'hono';
import type { Logger } from '../log.ts';
import { type AppOptions, createApp, type Env } from './app.ts';
import type { Deps } from './deps.ts';

/** One function's routes: given the deps, registers them on the app. */
export type RouteModule = (deps: Deps) => (app: Hono<Env>) => void;

export function createHostApp(opts: AppOptions, deps: Deps, modules: RouteModule[]): Hono<Env> {
  return createApp(opts, (app) => {
    for (const m of modules) m(deps)(app);
  });
}

export interface ListenOptions {
  port: number;
  hostname: string;
  logger: Logger;
  /** Defaults to {@link SERVER_TIMEOUTS}. */
  timeouts?: ServerTimeouts;
}

export interface ServerTimeouts {
  /** A request's headers must all have arrived this long after its first byte, or it is answered 408. */
  headersMs: number;
  /** The whole request must have arrived within this; 0 = no such limit. */
  requestMs: number;
  /** An idle kept-alive connection is closed after this. */
  keepAliveMs: number;
  /** How often Node checks the two limits above (the 408 comes at most this late). */
  checkIntervalMs: number;
}

/**
 * Keep-alive above queue-proxy's 90 s idle limit; no whole-request limit (Node's default, 300 s,
 * would cut an upload the Service allows 600 s for); headers within 20 s, checked every second,
 * so a caller too slow to send them is answered 408 within 21 s.
 */
export const SERVER_TIMEOUTS: ServerTimeouts = { headersMs: 20_000, requestMs: 0, keepAliveMs: 120_000, checkIntervalMs: 1_000 };

/** {@link SERVER_TIMEOUTS}, with every duration multiplied by `scale` (tests run the clock faster). */
export function scaledTimeouts(scale: number, base: ServerTimeouts = SERVER_TIMEOUTS): ServerTimeouts {
  const s = (ms: number) => Math.max(1, Math.round(ms * scale));
  return { headersMs: s(base.headersMs), requestMs: base.requestMs === 0 ? 0 : s(base.requestMs), keepAliveMs: s(base.keepAliveMs), checkIntervalMs: s(base.checkIntervalMs) };
}

/**
 * The timeouts from the environment: `FELIS_HEADERS_TIMEOUT_SECONDS` (default 20) overrides the
 * headers limit, and `FELIS_HTTP_TIME_SCALE` (default 1) speeds every duration up, for tests.
 */
export function serverTimeoutsFromEnv(env: NodeJS.ProcessEnv): ServerTimeouts {
  const num = (name: string, dflt: number) => {
    const raw = env[name];
    if (raw === undefined || raw === '') return dflt;
    const n = Number(raw);
    if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number, not ${JSON.stringify(raw)}`);
    return n;
  };
  const headersMs = num('FELIS_HEADERS_TIMEOUT_SECONDS', SERVER_TIMEOUTS.headersMs / 1000) * 1000;
  return scaledTimeouts(num('FELIS_HTTP_TIME_SCALE', 1), { ...SERVER_TIMEOUTS, headersMs });
}

const JSON_TYPE = 'application/json; charset=utf-8';

function envelope(code: string, message: string, requestId: string): string {
  return JSON.stringify({ error: { code, message, request_id: requestId } }) + '\n';
}

/** An answer given before the app saw the request: the app's own envelope, and a fresh request id. */
export function envelopeResponse(status: number, code: string, message: string): Response {
  const id = randomUUID();
  return new Response(envelope(code, message, id), { status, headers: { 'Content-Type': JSON_TYPE, 'X-Request-Id': id } });
}

/** What Node's parser refused, as status, code and message. */
export function clientErrorAnswer(err: NodeJS.ErrnoException): { status: 400 | 408 | 431; code: string; message: string } {
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') return { status: 408, code: 'request_timeout', message: 'the request headers did not arrive in time' };
  if (err.code === 'HPE_HEADER_OVERFLOW') return { status: 431, code: 'headers_too_large', message: 'the request headers are too large' };
  return { status: 400, code: 'bad_request', message: 'the request is not valid HTTP' };
}

/** Serves `app` on `hostname:port`; `onListening` gets the bound address. */
export function listen(app: { fetch: (req: Request, env?: unknown) => Response | Promise<Response> }, opts: ListenOptions, onListening?: (addr: AddressInfo) => void): Server {
  const listener = getRequestListener(app.fetch, {
    errorHandler: (err: unknown) => {
      if (err instanceof RequestError) {
        opts.logger.info({ err: err.message }, 'refused a request whose Host or target makes no URL');
        return envelopeResponse(400, 'bad_request', 'the request target or Host header is malformed');
      }
      opts.logger.error({ err }, 'request failed before routing');
      return envelopeResponse(500, 'internal', 'internal error');
    },
  });
  // Node answers a missing Host itself, bare; the adapter refuses it too, in the envelope.
  const t = opts.timeouts ?? SERVER_TIMEOUTS;
  const server = createServer(
    {
      requireHostHeader: false,
      headersTimeout: t.headersMs,
      requestTimeout: t.requestMs,
      keepAliveTimeout: t.keepAliveMs,
      connectionsCheckingInterval: t.checkIntervalMs,
    },
    listener,
  );
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    // A reset or a socket already half gone: nobody reads an answer.
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const a = clientErrorAnswer(err);
    const id = randomUUID();
    const body = envelope(a.code, a.message, id);
    // The caller's doing either way: info, never an error.
    opts.logger.info({ request_id: id, code: err.code, status: a.status }, a.status === 408 ? 'a caller was too slow to send its request headers' : 'refused a malformed request');
    const reason = { 400: 'Bad Request', 408: 'Request Timeout', 431: 'Request Header Fields Too Large' }[a.status];
    socket.end(`HTTP/1.1 ${a.status} ${reason}\r\nContent-Type: ${JSON_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` + `X-Request-Id: ${id}\r\nConnection: close\r\n\r\n${body}`);
  });
  server.listen(opts.port, opts.hostname, () => onListening?.(server.address() as AddressInfo));
  return server;
}
