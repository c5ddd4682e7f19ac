/**
 * How callers are authenticated, read from the environment apart from the functions' other
 * settings: FELIS_AUTH_MODE `token` (the shared bearer token, the default) or `kubernetes`
 * (TokenReview + SubjectAccessReview), the token audience, and the decision cache's bounds.
 * @module
 */
import { z } from 'zod';

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

const seconds = (d: number) => z.coerce.number().min(0).max(300).default(d);

const schema = z.object({
  FELIS_AUTH_MODE: z.enum(['token', 'kubernetes']).default('token'),
  FELIS_AUTH_AUDIENCE: z.string().min(1).default('felis-world'),
  FELIS_AUTH_EVENT_AUDIENCE: z.string().optional(),
  FELIS_NAMESPACE: z.string().min(1).default('minecraft'),
  FELIS_AUTH_ALLOW_TTL_SECONDS: seconds(10),
  FELIS_AUTH_DENY_TTL_SECONDS: seconds(5),
  FELIS_AUTH_CACHE_SIZE: z.coerce.number().int().min(1).max(1_000_000).default(4096),
});

export function authConfigFromEnv(env: NodeJS.ProcessEnv = process.env): AuthConfig {
  const parsed = schema.safeParse(Object.fromEntries(Object.entries(env).filter(([, v]) => v !== '')));
  if (!parsed.success) {
    const i = parsed.error.issues[0]!;
    throw new Error(`invalid configuration ${String(i.path[0])}: ${i.message}`);
  }
  const e = parsed.data;
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
