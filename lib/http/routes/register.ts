/**
 * A function's Hono routes, derived from the route table: the function supplies one handler per
 * route id, and the method, the path, the parsing of its query and body (by the table's schemas)
 * and the CloudEvent types that carry its requests come from the table. Parsing is on demand, so
 * a handler keeps its order of checks (a missing server is still answered before a bad body).
 * @module
 */
import type { Context, Hono } from 'hono';
import type { $ZodObject, $ZodType, output } from 'zod/v4/core';
import type { Logger } from '../../log.ts';
import * as z from '../../schema.ts';
import type { Env } from '../app.ts';
import type { Deps } from '../deps.ts';
import { badRequest } from '../envelope.ts';
import { acceptEvents, type EventTable, routeEventFor } from '../event-entry.ts';
import { jsonBody, rawQueryParam } from '../file-request.ts';
import type { RouteModule } from '../serve.ts';
import { SCHEMAS } from './schemas.ts';
import { ROUTES, type RouteId } from './table.ts';
import type { RouteSchemas, RouteTable, SchemaTable } from './types.ts';

/** What a handler may ask of its request, parsed by the route's schemas. */
export interface RouteInput<Q, B> {
  /** The query parameters the schema names, strictly decoded; 400 `bad_request` with the schema's message. */
  query(): Q;
  /**
   * The JSON body (at most 1 MiB), 400 `bad_request` when not JSON or not the schema's, or when
   * missing unless every field is optional (then an absent body is `{}`).
   */
  body(): Promise<B>;
}

export type Handler<Q = any, B = any> = (c: Context<Env>, input: RouteInput<Q, B>) => Response | Promise<Response>;

type Schemas = typeof SCHEMAS;
type QueryOf<K extends RouteId> = Schemas[K] extends { query: infer Q extends $ZodType } ? output<Q> : never;
type BodyOf<K extends RouteId> = Schemas[K] extends { body: { json: infer B extends $ZodType } } ? output<B> : never;
/** The route ids the table gives function `F`. */
export type IdsOf<F extends string> = { [K in RouteId]: (typeof ROUTES)[K]['fn'] extends F ? K : never }[RouteId];
/** One handler per route of function `F`, no more and no fewer. */
export type Handlers<F extends string> = { [K in IdsOf<F>]: Handler<QueryOf<K>, BodyOf<K>> };
export type FunctionName = (typeof ROUTES)[RouteId]['fn'];

function inputOf(c: Context<Env>, s: RouteSchemas): RouteInput<unknown, unknown> {
  let query: { value: unknown } | undefined;
  let body: Promise<unknown> | undefined;
  return {
    query() {
      if (!s.query) throw new Error('this route has no query schema');
      query ??= { value: parseQuery(c.req.url, s.query) };
      return query.value;
    },
    body() {
      const json = s.body && 'json' in s.body ? s.body.json : undefined;
      if (!json) throw new Error('this route has no JSON body schema');
      return (body ??= jsonBody(c, json));
    },
  };
}

/** Each parameter the schema names, strictly decoded, then the schema; its message is the caller's. */
export function parseQuery(url: string, schema: $ZodObject): unknown {
  const raw: Record<string, string> = {};
  for (const key of Object.keys(schema._zod.def.shape)) {
    const v = rawQueryParam(url, key);
    if (v !== undefined) raw[key] = v;
  }
  const parsed = z.safeParse(schema, raw);
  if (!parsed.success) throw badRequest(parsed.error.issues[0]?.message ?? 'invalid request');
  return parsed.data;
}

/** Whether a route reads a JSON body, and whether that body may be absent (every field optional). */
function bodyOf(s: RouteSchemas): boolean | 'optional' {
  if (!s.body || !('json' in s.body)) return false;
  return z.safeParse(s.body.json, {}).success ? 'optional' : true;
}

/**
 * Registers function `fn`'s routes of `table` with `handlers`, and its route events (with any
 * `openEvents`, handled directly) on the app's CloudEvents entry. Throws when a handler is
 * missing or names no route of `fn`: a route cannot be half-added.
 */
export function registerRoutes<T extends RouteTable>(
  app: Hono<Env>,
  logger: Logger,
  tables: { routes: T; schemas: SchemaTable<T> },
  fn: string,
  handlers: Readonly<Record<string, Handler>>,
  openEvents: EventTable = {},
): void {
  const mine = Object.entries(tables.routes).filter(([, e]) => e.fn === fn);
  const stray = Object.keys(handlers).filter((id) => tables.routes[id]?.fn !== fn);
  if (stray.length) throw new Error(`${fn}: handlers for routes it does not serve: ${stray.join(', ')}`);
  const events: EventTable = {};
  for (const [id, e] of mine) {
    if (e.event) events[e.event.type] = routeEventFor(e.method, e.path, e.event, bodyOf(tables.schemas[id]!));
  }
  if (Object.keys(events).length || Object.keys(openEvents).length) acceptEvents(app, logger, { ...events, ...openEvents });
  for (const [id, e] of mine) {
    const h = handlers[id];
    if (!h) throw new Error(`${fn}: no handler for route ${id} (${e.method} ${e.path})`);
    const s = tables.schemas[id]!;
    app.on(e.method, e.path, (c) => h(c, inputOf(c, s)));
  }
}

/** A function's route module: its handlers, and what it handles as events directly. */
export function defineFunction<F extends FunctionName>(fn: F, handlers: (deps: Deps) => Handlers<F>, openEvents?: (deps: Deps) => EventTable): RouteModule {
  return (deps) => (app) => registerRoutes(app, deps.logger, { routes: ROUTES, schemas: SCHEMAS }, fn, handlers(deps) as Record<string, Handler>, openEvents?.(deps));
}
