/**
 * The two questions kubernetes mode asks the apiserver, as kube-rbac-proxy and aggregated API
 * servers do: who is this token (TokenReview, for one audience) and may that user do this
 * (SubjectAccessReview, with the user's groups, uid and extra from the TokenReview). A reviewer
 * answers a decision or throws `AuthUnavailableError`: an apiserver that cannot be asked is never
 * read as a yes or a no.
 * @module
 */
import type { AuthenticationV1Api, AuthorizationV1Api, KubeConfig } from '@kubernetes/client-node';
import { loadClientNode, once } from '../kube/client.ts';
import { describeKubeError } from '../kube/errors.ts';
import type { Attributes } from './actions.ts';

export interface Identity {
  username: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

export interface Reviewer {
  /** The token's user when the apiserver authenticates it for `audience`; undefined when it does not. */
  authenticate(token: string, audience: string): Promise<Identity | undefined>;
  /** Whether `who` may do `attrs`. */
  authorize(who: Identity, attrs: Attributes): Promise<boolean>;
}

/** The apiserver could not be asked (down, refused our own identity, or answered nonsense). */
export class AuthUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'AuthUnavailableError';
  }
}

interface Clients {
  authn: AuthenticationV1Api;
  authz: AuthorizationV1Api;
}

/** The client's error, with the network cause fetch hides behind "fetch failed" (for the log). */
function why(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } } | undefined)?.cause;
  const detail = cause?.code ?? cause?.message;
  return detail ? `${describeKubeError(err)} (${detail})` : describeKubeError(err);
}

/** How long one review may take before the request is refused as unavailable. */
export const REVIEW_TIMEOUT_MS = 5000;

/** `p`, or AuthUnavailableError once `ms` have passed (a hung apiserver must not hang callers). */
function bounded<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new AuthUnavailableError(`${what} took longer than ${ms} ms`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/** Asks through client-node, made on first use (nothing loads before a request needs it). */
export class KubeReviewer implements Reviewer {
  readonly #clients: () => Promise<Clients>;
  readonly #timeoutMs: number;

  constructor(kc: KubeConfig | Promise<KubeConfig>, timeoutMs = REVIEW_TIMEOUT_MS) {
    this.#timeoutMs = timeoutMs;
    this.#clients = once(async () => {
      const [k, config] = await Promise.all([loadClientNode(), kc]);
      return { authn: config.makeApiClient(k.AuthenticationV1Api), authz: config.makeApiClient(k.AuthorizationV1Api) };
    });
  }

  async authenticate(token: string, audience: string): Promise<Identity | undefined> {
    const { authn } = await this.#clients();
    let status;
    try {
      const r = await bounded(
        authn.createTokenReview({ body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token, audiences: [audience] } } }),
        this.#timeoutMs,
        'TokenReview',
      );
      status = r.status;
    } catch (err) {
      if (err instanceof AuthUnavailableError) throw err;
      throw new AuthUnavailableError(`TokenReview failed: ${why(err)}`, { cause: err });
    }
    if (!status?.authenticated || !status.user?.username) return undefined;
    // An authenticator that ignores audiences must not let a token for another audience through.
    if (!(status.audiences ?? []).includes(audience)) return undefined;
    const u = status.user;
    return { username: u.username!, uid: u.uid, groups: u.groups ?? [], extra: u.extra };
  }

  async authorize(who: Identity, attrs: Attributes): Promise<boolean> {
    const { authz } = await this.#clients();
    const spec = {
      user: who.username,
      groups: who.groups,
      ...(who.uid ? { uid: who.uid } : {}),
      ...(who.extra ? { extra: who.extra } : {}),
      ...(attrs.kind === 'nonresource'
        ? { nonResourceAttributes: { path: attrs.path, verb: attrs.verb } }
        : {
            resourceAttributes: {
              group: attrs.group,
              resource: attrs.resource,
              subresource: attrs.subresource,
              verb: attrs.verb,
              namespace: attrs.namespace,
              ...(attrs.name ? { name: attrs.name } : {}),
            },
          }),
    };
    let status;
    try {
      const r = await bounded(authz.createSubjectAccessReview({ body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec } }), this.#timeoutMs, 'SubjectAccessReview');
      status = r.status;
    } catch (err) {
      if (err instanceof AuthUnavailableError) throw err;
      throw new AuthUnavailableError(`SubjectAccessReview failed: ${why(err)}`, { cause: err });
    }
    if (!status) throw new AuthUnavailableError('SubjectAccessReview answered without a status');
    // RBAC reports a dangling binding of the user as an evaluationError next to its answer: the
    // answer still stands (a broken grant grants nothing).
    return status.allowed === true && status.denied !== true;
  }
}
