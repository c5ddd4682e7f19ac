/**
 * Serving the functions over HTTP. `createHostApp` puts several functions' routes in one Hono app,
 * as an ingress in front of the separate Knative services would route them (`npm start`, the
 * end-to-end tests). `listen` serves an app so that every answer carries the envelope and an
 * X-Request-Id, including the ones Node or the adapter would otherwise give bare: a malformed
 * request line or header (400), headers too large (431), a Host header or request target that
 * does not make a URL (400).
 * @module
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { getRequestListener, RequestError } from '@hono/node-server';
import type { Hono } from 'hono';
import type { Logger } from '../log.ts';
import { createApp, type AppOptions, type Env } from './app.ts';
import type { Deps } from './deps.ts';
import type { RouteModule } from './serve.ts';

export function createHostApp(opts: AppOptions, deps: Deps, modules: RouteModule[]): Hono<Env> {
  return createApp(opts, (app) => {
    for (const m of modules) m(deps)(app);
  });
}

export interface ListenOptions {
  port: number;
  hostname: string;
  logger: Logger;
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
export function clientErrorAnswer(err: NodeJS.ErrnoException): { status: 400 | 431; code: string; message: string } {
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
  const server = createServer({ requireHostHeader: false }, listener);
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    // A reset or a socket already half gone: nobody reads an answer.
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const a = clientErrorAnswer(err);
    const id = randomUUID();
    const body = envelope(a.code, a.message, id);
    opts.logger.info({ request_id: id, code: err.code, status: a.status }, 'refused a malformed request');
    const reason = a.status === 431 ? 'Request Header Fields Too Large' : 'Bad Request';
    socket.end(
      `HTTP/1.1 ${a.status} ${reason}\r\nContent-Type: ${JSON_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${id}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
  server.listen(opts.port, opts.hostname, () => onListening?.(server.address() as AddressInfo));
  return server;
}
