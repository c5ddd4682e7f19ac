/**
 * A reviewer for tests, answering as an apiserver would from a token table (each token with its
 * user and audiences) and grants (`<verb> <resource>/<subresource>` on some servers or all, or a
 * non-resource `<verb> <path>`). It counts the reviews it answers, and can be made to fail like an
 * apiserver that is down. Grants can change between calls, as a binding is revoked.
 * @module
 */

import { sleep } from '../sleep.ts';
import type { Attributes } from './actions.ts';
import { AuthUnavailableError, type Identity, type Reviewer } from './reviewer.ts';

export interface FakeGrant {
  /** `get minecraftservers/files`, `post /felis-world/settle`. */
  permission: string;
  /** Only these servers (resourceNames); absent: every server. */
  servers?: string[];
}

export class FakeReviewer implements Reviewer {
  readonly tokens = new Map<string, { user: string; audiences: string[]; groups?: string[] }>();
  readonly grants = new Map<string, FakeGrant[]>();
  reviews = { tokens: 0, access: 0 };
  /** When set, every review throws it, as an unreachable apiserver would. */
  down: Error | undefined;
  /** Delay before each answer, in ms (for concurrency tests). */
  delayMs = 0;

  user(token: string, user: string, grants: FakeGrant[], audiences = ['felis-world']): this {
    this.grants.set(user, grants);
    return this.token(token, user, audiences);
  }

  /** Another token of a known user (e.g. one minted for another audience). */
  token(token: string, user: string, audiences: string[]): this {
    this.tokens.set(token, { user, audiences });
    return this;
  }

  async #wait(): Promise<void> {
    if (this.delayMs > 0) await sleep(this.delayMs);
    if (this.down) throw new AuthUnavailableError(this.down.message, { cause: this.down });
  }

  async authenticate(token: string, audience: string): Promise<Identity | undefined> {
    this.reviews.tokens++;
    await this.#wait();
    const t = this.tokens.get(token);
    if (!t?.audiences.includes(audience)) return undefined;
    return { username: t.user, groups: t.groups ?? ['system:authenticated'] };
  }

  async authorize(who: Identity, a: Attributes): Promise<boolean> {
    this.reviews.access++;
    await this.#wait();
    const want = a.kind === 'nonresource' ? `${a.verb} ${a.path}` : `${a.verb} ${a.resource}/${a.subresource}`;
    return (this.grants.get(who.username) ?? []).some((g) => g.permission === want && (a.kind === 'nonresource' || !g.servers || g.servers.includes(a.name)));
  }
}
