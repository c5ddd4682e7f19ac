/**
 * Bearer-token authentication for every route but health. The token comes from FELIS_TOKEN, or a
 * file (FELIS_TOKEN_FILE, e.g. a mounted Secret) re-read at most every 30 s so rotation needs no
 * restart. Comparison is constant-time over SHA-256 digests, so neither content nor length leaks.
 * @module
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { MiddlewareHandler } from 'hono';
import { ApiError } from './envelope.ts';

export type TokenSource = () => string;

export function tokenFromEnv(env: NodeJS.ProcessEnv = process.env): TokenSource {
  if (env.FELIS_TOKEN) {
    const t = env.FELIS_TOKEN;
    return () => t;
  }
  const file = env.FELIS_TOKEN_FILE;
  if (!file) throw new Error('no API token configured: set FELIS_TOKEN or FELIS_TOKEN_FILE');
  let cached = '';
  let readAt = 0;
  return () => {
    if (Date.now() - readAt > 30_000) {
      cached = readFileSync(file, 'utf8').trim();
      readAt = Date.now();
    }
    return cached;
  };
}

const digest = (s: string) => createHash('sha256').update(s).digest();

export function tokenMatches(given: string, expected: string): boolean {
  if (expected === '') return false;
  return timingSafeEqual(digest(given), digest(expected));
}

export function bearerAuth(token: TokenSource): MiddlewareHandler {
  return async (_c, next) => {
    const header = _c.req.header('authorization') ?? '';
    const m = /^Bearer (.+)$/.exec(header);
    if (!m || !tokenMatches(m[1]!, token())) throw new ApiError(401, 'unauthorized', 'a valid bearer token is required');
    await next();
  };
}
