/**
 * CORS for browser panels: only the exact origins an operator lists (`FELIS_CORS_ORIGINS`,
 * comma-separated; empty or unset: off, no CORS header anywhere). A preflight from a listed
 * origin is answered 204 before authentication (a browser sends it without the bearer), with the
 * methods and request headers the routes read and how long to keep the answer; every answer to a
 * listed origin names it and exposes the response headers a panel acts on. Another origin gets
 * no CORS header at all, so its preflight goes on to authentication like any request and the
 * browser refuses the call.
 *
 * Hono's `cors` middleware writes the headers; it is wrapped because on its own it also sets
 * `Access-Control-Expose-Headers`, `-Allow-Methods` and `-Max-Age` for origins it does not allow.
 * @module
 */
import type { MiddlewareHandler } from 'hono';
import { cors } from 'hono/cors';
import { readVariables } from '../env-readers.ts';

/** Every method the route table uses (lib/http/cors.test.ts checks the table against it). */
export const CORS_METHODS = ['GET', 'HEAD', 'PUT', 'POST', 'DELETE', 'PATCH'] as const;
/** The request headers a route reads beyond the CORS-safelisted ones. */
export const CORS_REQUEST_HEADERS = ['Authorization', 'Content-Type', 'Content-Digest', 'Range', 'If-Range', 'Prefer'] as const;
/** What a panel reads from an answer beyond the safelisted headers. */
export const CORS_EXPOSED_HEADERS = ['X-Request-Id', 'Content-Range', 'Accept-Ranges', 'ETag', 'Retry-After', 'Preference-Applied', 'Location', 'Content-Disposition', 'X-Felis-World-State'] as const;
/** How long a browser may reuse a preflight's answer: 10 minutes (Chromium keeps at most 2 hours). */
export const CORS_MAX_AGE_SECONDS = 600;

/**
 * The listed origins, each as a browser sends it (`scheme://host[:port]`, lower case, no default
 * port, no path). Throws on anything that is not one origin: a path, a query, credentials, `*` or
 * `null` would each allow something other than what the operator meant.
 */
export function parseCorsOrigins(raw: string | undefined): string[] {
  const out: string[] = [];
  for (const item of (raw ?? '').split(',')) {
    const given = item.trim();
    if (given === '') continue;
    let url: URL;
    try {
      url = new URL(given);
    } catch {
      throw new Error(`${JSON.stringify(given)} is not an origin (scheme://host[:port])`);
    }
    const bare = (url.protocol === 'http:' || url.protocol === 'https:') && url.username === '' && url.password === '' && url.search === '' && url.hash === '';
    if (!bare || url.pathname !== '/') {
      throw new Error(`${JSON.stringify(given)} is not an origin: give scheme://host[:port] with no path, query or credentials`);
    }
    if (!out.includes(url.origin)) out.push(url.origin);
  }
  return out;
}

/** `FELIS_CORS_ORIGINS` as origins ([] when unset or empty); a bad entry stops the function at start. */
export function corsOriginsFromEnv(env: NodeJS.ProcessEnv): string[] {
  return readVariables({ FELIS_CORS_ORIGINS: parseCorsOrigins }, env).FELIS_CORS_ORIGINS;
}

/** The middleware for `origins`; undefined when there are none (CORS off). */
export function corsFor(origins: readonly string[]): MiddlewareHandler | undefined {
  if (origins.length === 0) return undefined;
  const allowed = new Set(origins);
  const headers = cors({
    origin: (origin) => (allowed.has(origin) ? origin : null),
    allowMethods: [...CORS_METHODS],
    allowHeaders: [...CORS_REQUEST_HEADERS],
    exposeHeaders: [...CORS_EXPOSED_HEADERS],
    maxAge: CORS_MAX_AGE_SECONDS,
  });
  return async (c, next) => {
    const origin = c.req.header('origin');
    if (origin !== undefined && allowed.has(origin)) return headers(c, next);
    await next();
    // The answer differs by origin, so a shared cache must keep them apart.
    c.header('Vary', 'Origin', { append: true });
  };
}
