/**
 * Every HTTP route of every function, collected: method, path, the function that serves it, the
 * permission it needs, the envelope codes it can answer and the CloudEvent type that carries it,
 * and its prose. Each function declares its own in functions/<fn>/routes.ts (and their zod
 * schemas in schemas.ts beside it, which schemas.ts here collects), under the same route ids;
 * scripts/collect.ts puts them together (table.generated.ts), the functions in byte order of name:
 * the order of the OpenAPI document and of the README summary. The Hono registration (register.ts), the permission map (lib/auth/actions.ts), the event
 * types (lib/http/event-entry.ts), the OpenAPI document and the README summary are derived from
 * it. Adding a route to a function is its entry and prose in the function's routes.ts, its schemas
 * in its schemas.ts and its handler in its app.ts; a new function's folder is collected as it is.
 *
 * No validation library here: the serving shell reads this before a woken service answers its
 * first probe.
 * @module
 */

import { ROUTE_PROSE, ROUTES } from './table.generated.ts';

export { ROUTES };

export type RouteId = keyof typeof ROUTES;

/**
 * The routes' prose, by route id: the one-line summary of the OpenAPI document and the words on a
 * success of the README's route summary. Only the document generators (`npm run openapi`, the
 * freshness test) read it, and the collected table marks it pure: a function bundle drops it, and
 * its size is on neither a woken service's start-up path nor its bundle. Each function's routes.ts
 * checks its own prose is complete; the table test checks every function's is collected here.
 */
export { ROUTE_PROSE };
