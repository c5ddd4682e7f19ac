/**
 * Every route's permission, keyed `METHOD pattern` (the Hono route pattern), from the route table:
 * what the authorizer (lib/http/auth.ts) asks a SubjectAccessReview for. A route missing from the
 * table has none, and is refused in kubernetes mode.
 * @module
 */
import type { Permission } from '../../auth/permission.ts';
import { ROUTES } from './table.ts';
import type { RouteTable } from './types.ts';

/**
 * Reads of a world (list, read, the op list, a download ticket) are `get files`; every change to a
 * world is `update files`, uploads included; the lock release is `delete lock`.
 */
export const ROUTE_PERMISSIONS: Readonly<Record<string, Permission>> = permissionsOf(ROUTES);

/** A route table's permissions, keyed `METHOD pattern`. */
export function permissionsOf(routes: RouteTable): Record<string, Permission> {
  return Object.fromEntries(Object.values(routes).map((r) => [`${r.method} ${r.path}`, r.permission]));
}

/** The permission of a route, or undefined when the table has none (refused in kubernetes mode). */
export function permissionFor(method: string, routePath: string): Permission | undefined {
  return ROUTE_PERMISSIONS[`${method.toUpperCase()} ${routePath}`];
}
