/**
 * The shape of the route table. An entry holds what the HTTP edge needs before any validation
 * library loads (method, path, function, permission, error codes, event type: the serving shell
 * and the authorizer read it before a woken service answers its probe); the zod schemas of the
 * same route live beside it, keyed by the same route id, and load with the routes.
 * @module
 */
import type { $ZodObject, $ZodType } from 'zod/v4/core';
import type { Permission } from '../../auth/permission.ts';

export type Method = 'GET' | 'PUT' | 'POST' | 'DELETE';

/** An envelope `code` a route can answer, with its HTTP status. */
export type ErrorCode = readonly [status: number, code: string];

export interface RouteEntry {
  /** The function (Knative Service `felis-world-<fn>`) that serves it. */
  fn: string;
  method: Method;
  /** A Hono pattern (`/api/v1/servers/:name/file`). */
  path: string;
  permission: Permission;
  /** The route's own envelope codes; the codes every route can answer are added (openapi.ts). */
  errors: readonly ErrorCode[];
  /**
   * The CloudEvent type that carries this route's request, if any; `path`/`force`: the event's data
   * may carry `?path=`/`?force=`; `query`: which of the route's query parameters (`limit`, `q`, `depth` …) it may carry;
   * `id`: the event's `id` fills the route's `:id`. The event carries a body when the route takes a JSON body.
   */
  event?: { type: string; path?: boolean; force?: boolean; query?: readonly string[]; id?: boolean };
}

export type RouteTable = Readonly<Record<string, RouteEntry>>;

/** A route's entry as its function declares it (functions/<fn>/routes.ts): the function is named once, for all, by `routesOf`. */
export type RouteDeclaration = Omit<RouteEntry, 'fn'>;
export type RouteDeclarations = Readonly<Record<string, RouteDeclaration>>;

/** A route's words, for the document generators only (`ROUTE_PROSE`, table.ts): no function bundle keeps them. */
export interface RouteProse {
  /** One line on what it does. */
  summary: string;
  /** What a success answers, in words, for the README's summary. */
  answer: string;
}

export type ProseTable<T extends RouteTable> = { readonly [K in keyof T]: RouteProse };

/** What the document generators read: a route table with its schemas and its prose. */
export interface DocTables<T extends RouteTable> {
  routes: T;
  schemas: SchemaTable<T>;
  prose: ProseTable<T>;
}

/** A body that is not JSON (a raw upload, a streamed download), described. */
export interface RawContent {
  contentTypes: readonly string[];
  description: string;
}

/** A request or response header a route reads or sends. */
export interface HeaderSpec {
  description: string;
  required?: boolean;
}

export type ResponseSpec =
  /** `raw`: what the same status is when asked for otherwise (a tail's `follow=true`: an event stream). */
  | { description: string; json: $ZodType; raw?: RawContent; headers?: Record<string, HeaderSpec> }
  | { description: string; raw: RawContent; headers?: Record<string, HeaderSpec> }
  | { description: string; empty: true };

export interface RouteSchemas {
  /** Its query parameters, parsed strictly decoded (see lib/http/file-request.ts) then by zod. */
  query?: $ZodObject;
  body?: { json: $ZodType } | { raw: RawContent };
  requestHeaders?: Record<string, HeaderSpec>;
  /** Every success status it answers. */
  responses: Readonly<Record<number, ResponseSpec>>;
}

export type SchemaTable<T extends RouteTable> = { readonly [K in keyof T]: RouteSchemas };
