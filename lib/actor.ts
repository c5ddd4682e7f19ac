/**
 * Who a request acts for, carried through the call without touching every route (as the event key
 * is): the auth middleware runs the rest of the request inside `asActor`, and audit events and
 * log lines read `currentActor()`. `bearer` is the shared token's caller.
 * @module
 */
import { AsyncLocalStorage } from 'node:async_hooks';

export interface Actor {
  /** The reviewed username (`system:serviceaccount:<ns>:<name>` for a ServiceAccount), or `bearer`. */
  name: string;
  /** `<ns>/<name>` when the user is a ServiceAccount. */
  serviceAccount?: string;
}

export const BEARER: Actor = Object.freeze({ name: 'bearer' });

const SA_PREFIX = 'system:serviceaccount:';

export function actorOf(username: string): Actor {
  if (username.startsWith(SA_PREFIX)) {
    const [ns, name, ...rest] = username.slice(SA_PREFIX.length).split(':');
    if (ns && name && rest.length === 0) return { name: username, serviceAccount: `${ns}/${name}` };
  }
  return { name: username };
}

const scope = new AsyncLocalStorage<Actor>();

export function asActor<T>(actor: Actor, fn: () => T): T {
  return scope.run(actor, fn);
}

export function currentActor(): Actor | undefined {
  return scope.getStore();
}

/** The actor's fields as they go into an audit event or a log line. */
export function actorFields(a: Actor | undefined): { actor?: string; actor_service_account?: string } {
  if (!a) return {};
  return { actor: a.name, ...(a.serviceAccount ? { actor_service_account: a.serviceAccount } : {}) };
}

/** A pino mixin: every line logged inside a request names its actor. */
export const actorMixin = (): object => actorFields(scope.getStore());
