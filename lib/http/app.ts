/**
 * The common shell of every function: request ids, CORS for the listed origins (before auth: a
 * preflight carries no bearer), auth on `/api/*` (the shared token or Kubernetes identities),
 * `/healthz`, the API reference (`/openapi.json`, `/docs`), 405 with `Allow` for a known path's
 * unknown method, and one error handler that turns every failure into the envelope. Routes are
 * added by the functions themselves.
 * @module
 */
import { Hono } from 'hono';
import { requestId } from 'hono/request-id';
import type { Logger } from '../log.ts';
import { FilesTimeoutError, JobLostError } from '../runner/errors.ts';
import { allowedMethods } from './allowed-methods.ts';
import { mountApiDocs } from './api-docs.ts';
import { type ApiAuth, bindAuth, type TokenSource, tokenAuth } from './auth.ts';
import { corsFor } from './cors.ts';
import { ApiError, sendError, sendJson } from './envelope.ts';
import { mapDomainError } from './error-map.ts';
import { CallerGoneError } from './file-request.ts';

export interface AppOptions {
  logger: Logger;
  /** How callers are checked (lib/http/auth.ts); without it, the shared `token`. */
  auth?: ApiAuth;
  token?: TokenSource;
  /** The browser origins allowed to call (lib/http/cors.ts); none: CORS off. */
  corsOrigins?: readonly string[];
}

export type Env = { Variables: { requestId: string } };

/**
 * A request path as it may be logged: a signed download URL's ticket is a credential, so it is
 * replaced (`/api/v1/exports/<redacted>/download`).
 */
export function loggedPath(path: string): string {
  return path.replace(/^\/api\/v1\/exports\/[^/]*/, '/api/v1/exports/<redacted>');
}

/** A Hono app with the shared middleware; `register` adds the function's routes. */
export function createApp(opts: AppOptions, register: (app: Hono<Env>) => void): Hono<Env> {
  const app = new Hono<Env>();
  app.use(requestId({ limitLength: 128 }));
  // Hono hands only Error instances to onError; anything else thrown would escape the envelope.
  app.use(async (_c, next) => {
    try {
      await next();
    } catch (err) {
      if (err instanceof Error) throw err;
      throw new Error(`non-Error thrown: ${String(err)}`, { cause: err });
    }
  });
  const cors = corsFor(opts.corsOrigins ?? []);
  if (cors) app.use(cors);
  app.get('/healthz', (c) => sendJson(c, 200, { status: 'ok' }));
  mountApiDocs(app);
  const auth = opts.auth ?? (opts.token ? tokenAuth(opts.token) : undefined);
  if (!auth) throw new Error('createApp needs auth or a token');
  bindAuth(app, auth);
  app.use('/api/*', auth.middleware);
  register(app);
  app.notFound((c) => {
    const allow = allowedMethods(app.routes, c.req.path);
    // A route that takes the method and still says "not found" (an unlisted asset) means the thing.
    if (allow.length === 0 || allow.includes(c.req.method)) return sendError(c, 404, 'not_found', 'no such route');
    const r = sendError(c, 405, 'method_not_allowed', `${c.req.method} is not a method of ${c.req.path}; it takes ${allow.join(', ')}`);
    r.headers.set('allow', allow.join(', '));
    return r;
  });
  app.onError((err, c) => {
    if (err instanceof ApiError) {
      // A caller too slow with its body is the caller's doing: a line to say so, not an error.
      if (err.status === 408) opts.logger.info({ request_id: c.get('requestId'), method: c.req.method, path: loggedPath(c.req.path), code: err.code }, 'the caller stalled');
      return sendError(c, err.status, err.code, err.message);
    }
    if (err instanceof CallerGoneError || (c.req.raw.signal.aborted && !(err instanceof FilesTimeoutError))) {
      // The caller hung up (mid-body or while waiting): nothing failed on our side, and no one reads this answer.
      opts.logger.info({ request_id: c.get('requestId'), method: c.req.method, path: loggedPath(c.req.path), reason: String(c.req.raw.signal.reason) }, 'caller went away');
      return sendError(c, 400, 'cancelled', 'the request was cancelled by the caller');
    }
    if (err instanceof JobLostError) {
      opts.logger.error({ request_id: c.get('requestId'), err, method: c.req.method, path: loggedPath(c.req.path) }, 'file job ended without a result');
      return sendError(c, 500, 'internal', err.callerMessage);
    }
    const mapped = mapDomainError(err);
    // A change lost without a result: the caller is told what can be known, the log keeps how it ended.
    if (mapped?.code === 'outcome_unknown')
      opts.logger.error({ request_id: c.get('requestId'), err, method: c.req.method, path: loggedPath(c.req.path), op: mapped.op }, 'file job ended without a result');
    if (mapped?.status === 408) opts.logger.info({ request_id: c.get('requestId'), method: c.req.method, path: loggedPath(c.req.path), code: mapped.code }, 'the caller stalled');
    if (mapped) {
      const r = sendError(c, mapped.status, mapped.code, mapped.message, { path: mapped.path, op: mapped.op });
      if (mapped.retryAfter !== undefined) r.headers.set('retry-after', String(mapped.retryAfter));
      return r;
    }
    opts.logger.error({ request_id: c.get('requestId'), err, method: c.req.method, path: loggedPath(c.req.path) }, 'request failed');
    return sendError(c, 500, 'internal', 'internal error');
  });
  return app;
}
