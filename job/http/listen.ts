/**
 * A serving mode's listener on the Pod address: node:http with the mode's bounds, its router, and
 * its lifecycle (idle and lifetime stops, the stop on a signal or for the mode's own reason, the
 * clean shutdown: lifecycle.ts). A mode builds one, registers its routes, listens, and awaits
 * `stopped`.
 *
 * node:http is loaded when a listener is made, not imported: every one-shot Job loads the modules
 * that name these, and node:http is most of its start-up time.
 * @module
 */
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Lifecycle, type LifecycleOptions, type StopReason } from './lifecycle.ts';
import { type Handler, Router, type RouterOptions } from './router.ts';

export interface PodServerOptions<R extends string> extends RouterOptions {
  /** How long a request may take from its first byte to its answer (0: no bound; see socketIdleMs). */
  requestTimeoutMs: number;
  headersTimeoutMs?: number;
  keepAliveTimeoutMs?: number;
  maxConnections?: number;
  /** A socket that sends nothing for this long is destroyed (a stalled body ends). */
  socketIdleMs?: number;
  /** Every answer closes its connection: a mode that serves one request. */
  oneRequestPerConnection?: boolean;
  /** Its idle and lifetime periods, the grace at the stop, and what runs as it begins. */
  life: Omit<LifecycleOptions<R>, 'onStopped'>;
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

export class PodServer<R extends string = never> {
  readonly server: http.Server;
  readonly life: Lifecycle<R>;
  /** Settles with the reason once stopped and every connection gone. */
  readonly stopped: Promise<StopReason | R>;
  readonly #router: Router;

  /** Throws unless `tokenSha256` is 64 lowercase hex characters. The lifetime clock starts now. */
  constructor(o: PodServerOptions<R>) {
    this.#router = new Router(o);
    this.server = process.getBuiltinModule('node:http').createServer(
      {
        requestTimeout: o.requestTimeoutMs,
        headersTimeout: o.headersTimeoutMs ?? 5_000,
        keepAliveTimeout: o.keepAliveTimeoutMs ?? 5_000,
        maxHeaderSize: 8 << 10,
      },
      (req, res) => {
        // A stopping server lets no connection carry another request.
        if (o.oneRequestPerConnection || this.life.stopping) res.setHeader('connection', 'close');
        void this.#router.handle(req, res);
      },
    );
    this.server.maxConnections = o.maxConnections ?? 16;
    if (o.socketIdleMs !== undefined) this.server.setTimeout(o.socketIdleMs, (socket) => socket.destroy());
    let stopped!: (reason: StopReason | R) => void;
    this.stopped = new Promise((r) => (stopped = r));
    this.life = new Lifecycle(this.server, { ...o.life, onStopped: (reason) => stopped(reason) });
  }

  route(method: string, path: string, handler: Handler): this {
    this.#router.route(method, path, handler);
    return this;
  }

  listen(port: number, host: string): Promise<AddressInfo> {
    return listenOn(this.server, port, host);
  }
}

/** Runs `then` once `res` is out (or gone): a mode that stops after an answer stops after it is sent. */
export function whenAnswered(res: http.ServerResponse, then: () => void): void {
  if (res.writableFinished || res.destroyed || res.closed || !res.socket || res.socket.destroyed) return then();
  res.once('finish', then);
  res.once('close', then);
}
