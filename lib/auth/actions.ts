/**
 * Who may do what, as Kubernetes authorization attributes: what a SubjectAccessReview asks for a
 * permission (each route names its own in the route table; lib/http/routes/permissions.ts maps
 * them), and the permissions of the events a function handles directly. A server's routes are
 * subresources of its MinecraftServer, so ordinary RBAC rules (per server with `resourceNames`)
 * grant them; settling, which touches no server in particular, is a non-resource URL that only a
 * ClusterRole can grant.
 * @module
 */

import { JOB_CHANGE_TYPES, PING_TYPE } from '../events/settle-events.ts';
import { type Permission, SETTLE } from './permission.ts';

export { type Permission, SETTLE, SETTLE_URL } from './permission.ts';

export const API_GROUP = 'felis.lolicon.best';
export const RESOURCE = 'minecraftservers';

/** What a SubjectAccessReview asks, fully resolved. */
export type Attributes =
  | { kind: 'resource'; group: string; resource: string; subresource: string; verb: string; namespace: string; name: string }
  | { kind: 'nonresource'; path: string; verb: string };

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
export const EVENT_PERMISSIONS: Readonly<Record<string, Permission>> = Object.fromEntries([PING_TYPE, ...JOB_CHANGE_TYPES].map((t) => [t, SETTLE]));
