/**
 * Kubernetes-mode decisions: a token and the attributes of one action give an allow (with the
 * actor), an unauthenticated token, or a refusal naming the missing permission. Decisions are
 * reused for a short while, keyed by the token's SHA-256 (never the token) and the attributes: an
 * allow for `allowTtlMs`, a refusal for `denyTtlMs`, so a revoked binding stops working within the
 * allow TTL and a new one starts within the deny TTL. An apiserver that cannot answer is never
 * cached: the next request asks again. Concurrent identical questions share one review.
 * @module
 */
import { createHash } from 'node:crypto';
import { type Actor, actorOf } from '../actor.ts';
import { type Attributes, attributesKey, describePermission } from './actions.ts';
import { DecisionCache } from './cache.ts';
import type { Reviewer } from './reviewer.ts';

export type Decision =
  | { kind: 'allowed'; actor: Actor }
  | { kind: 'unauthenticated' }
  /** `permission` in words: `update minecraftservers/files survival`. */
  | { kind: 'forbidden'; actor: Actor; permission: string };

export interface AuthorizerOptions {
  allowTtlMs: number;
  denyTtlMs: number;
  cacheSize: number;
  now?: () => number;
}

const sha256 = (s: string) => createHash('sha256').update(s).digest('base64url');

export class KubeAuthorizer {
  readonly #reviewer: Reviewer;
  readonly #cache: DecisionCache<Decision>;
  readonly #inFlight = new Map<string, Promise<Decision>>();
  readonly #o: AuthorizerOptions;

  constructor(reviewer: Reviewer, o: AuthorizerOptions) {
    this.#reviewer = reviewer;
    this.#o = o;
    this.#cache = new DecisionCache(o.cacheSize, o.now);
  }

  /**
   * The decision for `token` doing `attrs`; with `attrs` undefined, only whether the token is
   * authenticated. Throws AuthUnavailableError when the apiserver cannot answer.
   */
  decide(token: string, audience: string, attrs: Attributes | undefined): Promise<Decision> {
    const key = `${sha256(token)}\0${audience}\0${attrs ? attributesKey(attrs) : 'authn'}`;
    const hit = this.#cache.get(key);
    if (hit) return Promise.resolve(hit);
    let p = this.#inFlight.get(key);
    if (!p) {
      p = this.#review(token, audience, attrs)
        .then((d) => {
          this.#cache.set(key, d, d.kind === 'allowed' ? this.#o.allowTtlMs : this.#o.denyTtlMs);
          return d;
        })
        .finally(() => this.#inFlight.delete(key));
      this.#inFlight.set(key, p);
    }
    return p;
  }

  async #review(token: string, audience: string, attrs: Attributes | undefined): Promise<Decision> {
    const who = await this.#reviewer.authenticate(token, audience);
    if (!who) return { kind: 'unauthenticated' };
    const actor = actorOf(who.username);
    if (!attrs) return { kind: 'allowed', actor };
    if (await this.#reviewer.authorize(who, attrs)) return { kind: 'allowed', actor };
    return { kind: 'forbidden', actor, permission: describePermission(attrs) };
  }

  /** Decisions held (for tests and the bench). */
  get cached(): number {
    return this.#cache.size;
  }
}
