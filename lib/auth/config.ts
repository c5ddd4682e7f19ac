/**
 * How callers are authenticated, read from the environment apart from the functions' other
 * settings: FELIS_AUTH_MODE `token` (the shared bearer token, the default) or `kubernetes`
 * (TokenReview + SubjectAccessReview), the token audience, and the decision cache's bounds.
 * @module
 */
import { oneOf, optional, readVariables, seconds, textOr, wholeNumber } from '../env-readers.ts';

export type AuthMode = 'token' | 'kubernetes';

export interface AuthConfig {
  mode: AuthMode;
  /** The audience a caller's token must be minted for (TokenReview `spec.audiences`). */
  audience: string;
  /** The audience of event deliveries' tokens (Knative OIDC mints them for the subscriber); default `audience`. */
  eventAudience: string;
  /** The namespace of the servers (SubjectAccessReview `namespace`). */
  namespace: string;
  /** How long an allow, and a refusal (401 or 403), is reused without asking the apiserver again. */
  allowTtlMs: number;
  denyTtlMs: number;
  /** Most decisions kept; the least recently used go first. */
  cacheSize: number;
}

const VARIABLES = {
  FELIS_AUTH_MODE: oneOf(['token', 'kubernetes'] as const, 'token'),
  FELIS_AUTH_AUDIENCE: textOr('felis-world'),
  FELIS_AUTH_EVENT_AUDIENCE: optional,
  FELIS_NAMESPACE: textOr('minecraft'),
  FELIS_AUTH_ALLOW_TTL_SECONDS: seconds(10, 0, 300),
  FELIS_AUTH_DENY_TTL_SECONDS: seconds(5, 0, 300),
  FELIS_AUTH_CACHE_SIZE: wholeNumber(4096, 1, 1_000_000),
};

export function authConfigFromEnv(env: NodeJS.ProcessEnv = process.env): AuthConfig {
  const e = readVariables(VARIABLES, env);
  return {
    mode: e.FELIS_AUTH_MODE,
    audience: e.FELIS_AUTH_AUDIENCE,
    eventAudience: e.FELIS_AUTH_EVENT_AUDIENCE || e.FELIS_AUTH_AUDIENCE,
    namespace: e.FELIS_NAMESPACE,
    allowTtlMs: Math.round(e.FELIS_AUTH_ALLOW_TTL_SECONDS * 1000),
    denyTtlMs: Math.round(e.FELIS_AUTH_DENY_TTL_SECONDS * 1000),
    cacheSize: e.FELIS_AUTH_CACHE_SIZE,
  };
}
