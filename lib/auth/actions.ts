/**
 * Who may call which route, as Kubernetes authorization attributes: a map from each route (method
 * and Hono route pattern) to what a SubjectAccessReview asks, derived from the route table
 * (lib/http/routes/table.ts), where each route names its permission. A server's routes are
 * subresources of its MinecraftServer, so ordinary RBAC rules (per server with `resourceNames`)
 * grant them; settling, which touches no server in particular, is a non-resource URL that only a
 * ClusterRole can grant. A route missing from the table is refused in kubernetes mode.
 * @module
 */

import { JOB_CHANGE_TYPES, PING_TYPE } from '../events/settle-events.ts';
import { ROUTES } from '../http/routes/table.ts';
import type { RouteTable } from '../http/routes/types.ts';
import type { Permission } from './permission.ts';

export { SETTLE_URL, type Permission } from './permission.ts';

export const API_GROUP = 'felis.lolicon.best';
export const RESOURCE = 'minecraftservers';

/**
 * Every route of every function, `METHOD pattern`, from the route table (lib/http/routes/table.ts).
 * Reads of a world (list, read, the op list, a download ticket) are `get files`; every change to a
 * world is `update files`, uploads included; the lock release is `delete lock`.
 */
export const ROUTE_PERMISSIONS: Readonly<Record<string, Permission>> = permissionsOf(ROUTES);

/** A route table's permissions, keyed `METHOD pattern`. */
export function permissionsOf(routes: RouteTable): Record<string, Permission> {
  return Object.fromEntries(Object.values(routes).map((r) => [`${r.method} ${r.path}`, r.permission]));
}

export const SETTLE: Permission = ROUTE_PERMISSIONS['POST /api/v1/restore-chains/settle']!;

/** What a SubjectAccessReview asks, fully resolved. */
export type Attributes =
  | { kind: 'resource'; group: string; resource: string; subresource: string; verb: string; namespace: string; name: string }
  | { kind: 'nonresource'; path: string; verb: string };

/** The permission of a route, or undefined when the table has none (refused in kubernetes mode). */
export function permissionFor(method: string, routePath: string): Permission | undefined {
  return ROUTE_PERMISSIONS[`${method.toUpperCase()} ${routePath}`];
}

/** The attributes of `p` for a request on server `name` (empty for a route without `:name`). */
export function attributesOf(p: Exclude<Permission, { kind: 'public' }>, namespace: string, name: string): Attributes {
  if (p.kind === 'nonresource') return { kind: 'nonresource', path: p.path, verb: p.verb };
  return { kind: 'resource', group: API_GROUP, resource: RESOURCE, subresource: p.subresource, verb: p.verb, namespace, name };
}

/** A stable key of the attributes (for the decision cache). */
export function attributesKey(a: Attributes): string {
  return a.kind === 'nonresource' ? `N\0${a.verb}\0${a.path}` : `R\0${a.verb}\0${a.group}\0${a.resource}\0${a.subresource}\0${a.namespace}\0${a.name}`;
}

/**
 * The permission in words, as a refusal names it: `update minecraftservers/files survival`,
 * `list minecraftservers/holder in minecraft`, `post /felis-world/settle`.
 */
export function describePermission(a: Attributes): string {
  if (a.kind === 'nonresource') return `${a.verb} ${a.path}`;
  const res = `${a.resource}/${a.subresource}`;
  return a.name ? `${a.verb} ${res} ${a.name}` : `${a.verb} ${res} in ${a.namespace}`;
}

/**
 * Events a function handles directly (not through a route): a Knative source's settle trigger.
 * In kubernetes mode each needs its permission from the delivery's token; a type missing here is
 * refused.
 */
export const EVENT_PERMISSIONS: Readonly<Record<string, Permission>> = Object.fromEntries(
  [PING_TYPE, ...JOB_CHANGE_TYPES].map((t) => [t, SETTLE]),
);
