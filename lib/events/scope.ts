/**
 * The identity of the CloudEvent a request is serving, carried through the call without touching
 * every route: the event entry runs the route inside `withEvent`, and the file editor reads
 * `currentEventKey()` to label the Job it creates (or find the one an earlier delivery created).
 * This is request-scoped context only; the record of handled events is the labelled Job itself.
 * @module
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';

const scope = new AsyncLocalStorage<string>();

/**
 * A label-safe key for an event: 48 hex of sha256(source, id). Knative dedupes on source + id, so
 * two deliveries of one event share it and two different events never do (192 bits).
 */
export function eventKey(source: string, id: string): string {
  return createHash('sha256').update(source).update('\0').update(id).digest('hex').slice(0, 48);
}

export function withEvent<T>(key: string, fn: () => T): T {
  return scope.run(key, fn);
}

/** The key of the event being served, or undefined for a plain HTTP request. */
export function currentEventKey(): string | undefined {
  return scope.getStore();
}
