/**
 * The identity of the CloudEvent a request is serving, carried through the call without touching
 * every route: the event entry runs the route inside `withEvent`, and the file editor reads
 * `currentEvent()` to label the Job it creates (or find the one an earlier delivery created).
 * This is request-scoped context only; the record of handled events is the labelled Job itself.
 * @module
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';

/** The event being served: its key (source and id) and the digest of the request it carries. */
export interface EventScope {
  key: string;
  /** 48 hex of sha256 of the request the event was turned into; absent for a bare key (tests). */
  request?: string;
}

const scope = new AsyncLocalStorage<EventScope>();

/**
 * A label-safe key for an event: 48 hex of sha256(source, id). Knative dedupes on source + id, so
 * two deliveries of one event share it and two different events never do (192 bits).
 */
export function eventKey(source: string, id: string): string {
  return createHash('sha256').update(source).update('\0').update(id).digest('hex').slice(0, 48);
}

/**
 * What an event asks for, as a label-safe digest: 48 hex of sha256 over the method, the route's
 * URL (server, path, query) and the JSON body exactly as the route receives it. A redelivery
 * carries the same request, so the same digest; a sender reusing an id for another request does not.
 */
export function requestDigest(method: string, url: string, body: string | undefined): string {
  return createHash('sha256')
    .update(method)
    .update('\0')
    .update(url)
    .update('\0')
    .update(body ?? '')
    .digest('hex')
    .slice(0, 48);
}

export function withEvent<T>(ev: string | EventScope, fn: () => T): T {
  return scope.run(typeof ev === 'string' ? { key: ev } : ev, fn);
}

/**
 * Runs `fn` as if no event were being served: for a step before the one Job an event's delivery
 * is answered from (files/nbt's read before its write), so that Job is the only one it labels.
 */
export function withoutEvent<T>(fn: () => T): T {
  return scope.exit(fn);
}

/** The event being served, or undefined for a plain HTTP request. */
export function currentEvent(): EventScope | undefined {
  return scope.getStore();
}

/** The key of the event being served, or undefined for a plain HTTP request. */
export function currentEventKey(): string | undefined {
  return scope.getStore()?.key;
}
