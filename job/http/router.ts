/**
 * The one router of the Job's serving modes (browse, edit, receive, a write's content, export, a
 * pull's cancel), on node:http: the Job bundle carries no web framework. Each mode registers its
 * routes (a method and an exact path); the router answers everything else the same way for all:
 *
 * - the job-key guard first: 401 `{"error":"unauthorized"}` without the right token, before the
 *   path, the method or the load is looked at, so such a caller learns nothing;
 * - 404 `{"error":"not found"}` for a path no route has, 405 `{"error":"method not allowed"}` (with
 *   `Allow`) for another method on one that has; or the mode's own `fallback` for both;
 * - a handler that throws: 500 `{"error": message}`, or the connection cut when the answer had
 *   begun (a body cut off is never taken for a whole one).
 *
 * A refusal drains what body came (or closes the connection, `closeOnRefusal`), so the answer is
 * not lost under a reset.
 * @module
 */
import type http from 'node:http';
import { errorBody, send } from './answer.ts';
import { bearerMatches, tokenDigest } from './guard.ts';

/** One route's answer; `url` is the request's, parsed. */
export type Handler = (req: http.IncomingMessage, res: http.ServerResponse, url: URL) => void | Promise<void>;

export interface RouterOptions {
  /** Hex SHA-256 of the token callers present (the Job spec carries only this). */
  tokenSha256: string;
  /** The router's own refusals close the connection (a mode whose caller must not reuse it). */
  closeOnRefusal?: boolean;
  /** Answers a request no route takes, instead of the 404/405 (a mode with checks of its own first). */
  fallback?: Handler;
}

export class Router {
  readonly #expected: Buffer;
  readonly #o: RouterOptions;
  /** path → method → handler */
  readonly #routes = new Map<string, Map<string, Handler>>();

  /** Throws unless `tokenSha256` is 64 lowercase hex characters. */
  constructor(o: RouterOptions) {
    this.#expected = tokenDigest(o.tokenSha256);
    this.#o = o;
  }

  route(method: string, path: string, handler: Handler): this {
    let methods = this.#routes.get(path);
    if (!methods) this.#routes.set(path, (methods = new Map()));
    if (methods.has(method)) throw new Error(`${method} ${path} has a route already`);
    methods.set(method, handler);
    return this;
  }

  /** Answers one request; never rejects. */
  async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    try {
      if (!bearerMatches(req.headers.authorization, this.#expected)) return this.#refuse(req, res, 401, '{"error":"unauthorized"}');
      const url = new URL(req.url ?? '/', 'http://pod.invalid');
      const methods = this.#routes.get(url.pathname);
      const handler = methods?.get(req.method ?? '') ?? this.#o.fallback;
      if (handler) return await handler(req, res, url);
      if (!methods) return this.#refuse(req, res, 404, '{"error":"not found"}');
      return this.#refuse(req, res, 405, '{"error":"method not allowed"}', { allow: [...methods.keys()].join(', ') });
    } catch (e) {
      if (res.headersSent) res.destroy();
      else send(res, 500, errorBody(e));
    }
  }

  #refuse(req: http.IncomingMessage, res: http.ServerResponse, status: number, body: string, extra?: Record<string, string>): void {
    if (this.#o.closeOnRefusal) res.setHeader('connection', 'close');
    req.resume();
    send(res, status, body, extra);
  }
}
