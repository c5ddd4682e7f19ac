/**
 * A loopback HTTP reverse proxy in front of a real kube-apiserver (HTTPS, certificate not
 * verified). It gives the cluster tier what the embedded server has built in: request counts by
 * user and `<verb> <resource>` (the verb derived from method, path and `watch` exactly as the
 * embedded server derives it), and injected request faults (`failNext`). Bodies stream both ways
 * unbuffered, so a followed `pods/log` reaches the client chunk by chunk.
 *
 * @module
 */

import { randomUUID } from 'node:crypto';
import { createServer, Agent as HttpAgent, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { RequestCounter } from '../apiserver.ts';
import type { Faults } from '../faults.ts';
import { listenLoopback } from '../listen.ts';
import { requestInfo } from '../request-info.ts';

export interface CountingProxyOptions {
  /** `https://127.0.0.1:<port>` of the real apiserver (certificate not verified), or an `http://` one. */
  upstream: string;
  /** Bearer token → user name, for counting and user-scoped faults. */
  users: Map<string, string>;
  faults: Faults;
  logger?: { warn(...a: unknown[]): void };
}

export interface CountingProxy {
  /** `http://127.0.0.1:<port>` */
  url: string;
  counter: RequestCounter;
  close(): Promise<void>;
}

/** Hop-by-hop headers (RFC 9110 §7.6.1) are not forwarded. */
const HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'proxy-authorization', 'proxy-authenticate']);

export function userOf(users: Map<string, string>, authorization: string | undefined): string {
  const m = /^Bearer\s+(.+)$/i.exec(authorization ?? '');
  return (m && users.get(m[1]!.trim())) ?? 'system:anonymous';
}

export async function startCountingProxy(opts: CountingProxyOptions): Promise<CountingProxy> {
  const up = new URL(opts.upstream);
  const tls = up.protocol === 'https:';
  const agent = tls ? new HttpsAgent({ keepAlive: true, rejectUnauthorized: false, maxSockets: 64 }) : new HttpAgent({ keepAlive: true, maxSockets: 64 });
  const send = tls ? httpsRequest : httpRequest;
  const counter = new RequestCounter();

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://proxy');
    const method = req.method ?? 'GET';
    const info = requestInfo(method, url);
    const user = userOf(opts.users, req.headers.authorization);
    const resource = info.subresource ? `${info.resource}/${info.subresource}` : info.resource;
    counter.add(user, info.resourceRequest ? `${info.verb} ${resource}` : `${info.verb} ${info.path}`);
    const fault = opts.faults.takeRequestFault(user, info.verb, resource);
    if (fault) {
      req.resume();
      const text = `${JSON.stringify(fault.status)}\n`;
      res.writeHead(fault.status.code, {
        'Audit-Id': randomUUID(),
        'Cache-Control': 'no-cache, private',
        'Content-Type': 'application/json',
        'Content-Length': String(Buffer.byteLength(text)),
        ...fault.headers,
      });
      res.end(text);
      return;
    }
    const headers: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && !HOP.has(k)) headers[k] = v;
    headers.host = up.host;
    const upReq = send({ agent, host: up.hostname, port: up.port, method, path: req.url, headers }, (upRes) => {
      const out: Record<string, string | string[]> = {};
      for (const [k, v] of Object.entries(upRes.headers)) if (v !== undefined && !HOP.has(k)) out[k] = v;
      res.writeHead(upRes.statusCode ?? 502, upRes.statusMessage, out);
      // Flush the head at once (a followed log may not send a byte for a while), then one write
      // per upstream chunk.
      res.flushHeaders();
      upRes.on('data', (chunk: Buffer) => res.write(chunk));
      upRes.on('end', () => res.end());
      upRes.on('error', () => res.destroy());
      res.on('close', () => {
        if (!upRes.complete) upRes.destroy();
      });
    });
    upReq.on('error', (err) => {
      opts.logger?.warn({ err: String(err), path: req.url }, 'proxy: upstream request failed');
      if (!res.headersSent) {
        const text = `${JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: `proxy: ${err.message}`, reason: 'ServiceUnavailable', code: 503 })}\n`;
        res.writeHead(503, { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(text)) });
        res.end(text);
      } else {
        res.destroy();
      }
    });
    res.on('close', () => {
      if (!res.writableFinished) upReq.destroy();
    });
    req.pipe(upReq);
  };

  const server: Server = createServer(handle);
  server.keepAliveTimeout = 5000;
  const listening = await listenLoopback(server);
  const port = listening.port;
  let closing: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}`,
    counter,
    close() {
      closing ??= listening.close().then(() => agent.destroy());
      return closing;
    },
  };
}
