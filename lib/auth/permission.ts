/**
 * What one route needs, as Kubernetes authorization attributes before the server name and
 * namespace are known. A type module of its own so that the route table can name permissions
 * without importing the authorizer's logic (and the authorizer can derive its map from the table).
 * @module
 */

/** The non-resource URL whose `post` allows a settling pass. */
export const SETTLE_URL = '/felis-world/settle';

export type Permission =
  /** On the server named by the route's `:name` (or on all servers of the namespace, for `list`). */
  | { kind: 'server'; subresource: 'files' | 'holder' | 'state' | 'lock'; verb: 'get' | 'list' | 'update' | 'delete' }
  | { kind: 'nonresource'; path: string; verb: string }
  /** The route carries its own credential (a signed, expiring URL): no bearer review. */
  | { kind: 'public' };

/** What a settling pass needs: the route's, and the settle triggers' (events handled directly). */
export const SETTLE: Permission = { kind: 'nonresource', path: SETTLE_URL, verb: 'post' };
