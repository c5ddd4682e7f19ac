/**
 * Who may call the API. Two modes (FELIS_AUTH_MODE, see lib/auth/config.ts):
 *
 * - `token`: one shared bearer token from FELIS_TOKEN, or a file (FELIS_TOKEN_FILE, e.g. a mounted
 *   Secret) re-read at most every 30 s so rotation needs no restart. Comparison is constant-time
 *   over SHA-256 digests, so neither content nor length leaks. The actor is `bearer`.
 * - `kubernetes`: the caller's Kubernetes token is reviewed (TokenReview for the audience, then a
 *   SubjectAccessReview for the route's permission from lib/auth/actions.ts); the actor is the
 *   reviewed user. 401 for a token the apiserver does not accept, 403 naming the missing
 *   permission, 503 `auth_unavailable` when the apiserver cannot answer.
 *
 * Either way the rest of the request runs as its actor (lib/actor.ts), so audit events and
 * log lines name who acted.
 * @module
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Context, MiddlewareHandler } from 'hono';
import { matchedRoutes } from 'hono/route';
import { type Actor, asActor, BEARER } from '../actor.ts';
import { type Attributes, attributesOf, EVENT_PERMISSIONS, type Permission } from '../auth/actions.ts';
import { KubeAuthorizer } from '../auth/authorizer.ts';
import { type AuthConfig, type AuthMode, authConfigFromEnv } from '../auth/config.ts';
import { AuthUnavailableError, KubeReviewer } from '../auth/reviewer.ts';
import { currentEventKey } from '../events/scope.ts';
import type { Logger } from '../log.ts';
import { ApiError } from './envelope.ts';
import { permissionFor } from './routes/permissions.ts';

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

/** The app's way of deciding who may call; one per app. */
export interface ApiAuth {
  mode: AuthMode;
  /** Runs on `/api/*`: refuses, or runs the rest of the request as its actor. */
  middleware: MiddlewareHandler;
  /**
   * For an event handled directly (no route): the actor it runs as, or a thrown ApiError. In
   * token mode such events need no token (a Knative source cannot send ours).
   */
  checkEvent(authorization: string | undefined, eventType: string): Promise<Actor>;
  /**
   * Is this a caller at all (no permission asked yet)? Throws 401 (or 503 when it cannot be told).
   * The event entry asks before it reads a delivery's body; `event`: the token is a delivery's.
   */
  authenticate(authorization: string, event: boolean): Promise<void>;
}

const bearerOf = (header: string | undefined): string | undefined => /^Bearer (.+)$/.exec(header ?? '')?.[1];
const unauthorized = (message = 'a valid bearer token is required') => new ApiError(401, 'unauthorized', message);

/** The route that will answer this request (the first handler after the running middleware). */
function answeringRoute(c: Context): { method: string; path: string } | undefined {
  return matchedRoutes(c).slice(c.req.routeIndex + 1)[0];
}

/** A route's `:name` from the request path (middleware sees no params of the route it precedes). */
function routeParam(pattern: string, path: string, param: string): string {
  const i = pattern.split('/').indexOf(`:${param}`);
  if (i < 0) return '';
  const seg = path.split('/')[i] ?? '';
  try {
    return decodeURIComponent(seg);
  } catch {
    return seg;
  }
}

/** Today's shared token: every route but a public one needs it; the actor is `bearer`. */
export function tokenAuth(token: TokenSource): ApiAuth {
  return {
    mode: 'token',
    middleware: async (c, next) => {
      const route = answeringRoute(c);
      if (route && permissionFor(route.method, route.path)?.kind === 'public') return next();
      const given = bearerOf(c.req.header('authorization'));
      if (given === undefined || !tokenMatches(given, token())) throw unauthorized();
      await asActor(BEARER, next);
    },
    checkEvent: async () => BEARER,
    authenticate: async (authorization) => {
      const given = bearerOf(authorization);
      if (given === undefined || !tokenMatches(given, token())) throw unauthorized();
    },
  };
}

/** Kubernetes identities and RBAC, through `authorizer`. */
export function kubernetesAuth(authorizer: KubeAuthorizer, cfg: AuthConfig, logger: Logger): ApiAuth {
  /** The actor for `token` doing `attrs` (undefined: only authenticated), or a thrown ApiError. */
  async function check(token: string | undefined, attrs: Attributes | undefined, requestId: string | undefined, event: boolean): Promise<Actor> {
    if (token === undefined) throw unauthorized();
    // Knative's OIDC delivery mints a token for the subscriber's audience, not the callers' one.
    const audience = event ? cfg.eventAudience : cfg.audience;
    let d;
    try {
      d = await authorizer.decide(token, audience, attrs);
    } catch (err) {
      if (!(err instanceof AuthUnavailableError)) throw err;
      logger.error({ request_id: requestId, err: err.message }, 'permission check unavailable; refusing');
      throw new ApiError(503, 'auth_unavailable', 'the permission check could not be made (Kubernetes did not answer); retry later');
    }
    if (d.kind === 'unauthenticated') throw unauthorized(`the bearer token is not a Kubernetes token valid for audience ${audience}`);
    if (d.kind === 'forbidden') {
      logger.info({ request_id: requestId, actor: d.actor.name, permission: d.permission }, 'refused: missing permission');
      throw new ApiError(403, 'forbidden', `${d.actor.name} lacks the permission: ${d.permission}`);
    }
    return d.actor;
  }

  const attrsFor = (p: Permission, name: string) => (p.kind === 'public' ? undefined : attributesOf(p, cfg.namespace, name));

  return {
    mode: 'kubernetes',
    middleware: async (c, next) => {
      const route = answeringRoute(c);
      const token = bearerOf(c.req.header('authorization'));
      const requestId = c.get('requestId' as never) as string | undefined;
      let attrs: Attributes | undefined;
      if (route) {
        const p = permissionFor(route.method, route.path);
        if (p?.kind === 'public') return next();
        // Fail closed: a route nobody gave a permission is refused, once the caller is known.
        if (!p) {
          await check(token, undefined, requestId, currentEventKey() !== undefined);
          throw new ApiError(403, 'forbidden', `no permission is defined for ${route.method} ${route.path}; it is refused in kubernetes mode`);
        }
        attrs = attrsFor(p, routeParam(route.path, new URL(c.req.url).pathname, 'name'));
      }
      // No route: the caller must still be someone before learning that nothing is there.
      const actor = await check(token, attrs, requestId, currentEventKey() !== undefined);
      await asActor(actor, next);
    },
    async checkEvent(authorization, eventType) {
      const p = EVENT_PERMISSIONS[eventType];
      const token = bearerOf(authorization);
      if (!p) {
        await check(token, undefined, undefined, true);
        throw new ApiError(403, 'forbidden', `no permission is defined for events of type ${eventType}; they are refused in kubernetes mode`);
      }
      return check(token, attrsFor(p, ''), undefined, true);
    },
    async authenticate(authorization, event) {
      await check(bearerOf(authorization), undefined, undefined, event);
    },
  };
}

/** The mode FELIS_AUTH_MODE chooses; `kc` (or its promise) is used only in kubernetes mode. */
export function authFromEnv(env: NodeJS.ProcessEnv, kc: KubeConfig | Promise<KubeConfig>, logger: Logger): ApiAuth {
  const cfg = authConfigFromEnv(env);
  if (cfg.mode === 'token') return tokenAuth(tokenFromEnv(env));
  return kubernetesAuth(new KubeAuthorizer(new KubeReviewer(kc), cfg), cfg, logger);
}

const byApp = new WeakMap<object, ApiAuth>();

/** Remembers the app's auth, for the event entry's directly handled events. */
export function bindAuth(app: object, auth: ApiAuth): void {
  byApp.set(app, auth);
}

export function authOf(app: object): ApiAuth | undefined {
  return byApp.get(app);
}
