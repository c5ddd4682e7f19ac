/**
 * The OpenAPI 3.1 document of the route table. Schemas come from zod 4's own `z.toJSONSchema`
 * with target draft-2020-12, the dialect OpenAPI 3.1 uses: zod is already the schema library of
 * the routes, so no second library has to follow zod's major versions, and what the document says
 * is what `lib/http` parses. Every error answer is the envelope (lib/http/envelope.ts), kept once
 * as `components.schemas.ErrorEnvelope`, narrowed to the route's codes and the codes every route can
 * answer, per status, by an `enum` on `code`; an answer several routes give alike is kept once in
 * `components.responses`. Repeated in every route, the envelope and the common refusals were most of
 * the document (318 KB served, now about 115 KB).
 * @module
 */
import type { $ZodType } from 'zod/v4/core';
import * as z from '../../schema.ts';
import { described } from '../../schema.ts';
import { RETRY_AFTER_CODES } from '../error-map.ts';
import { WHOLE_NUMBERS } from './common-schemas.ts';
import type { DocTables, ErrorCode, HeaderSpec, RawContent, RouteEntry, RouteProse, RouteSchemas, RouteTable } from './types.ts';

type Json = Record<string, unknown>;
type JsonSchemaOverride = NonNullable<Parameters<typeof z.toJSONSchema>[1]>['override'];

/**
 * What any route behind the bearer check can answer, whatever it does (lib/http/app.ts, auth.ts, host.ts).
 * Kept with the document, which alone reads them, so no function bundle loads them with the table.
 */
export const COMMON_ERRORS: readonly ErrorCode[] = [
  [400, 'bad_request'], // a malformed request line or Host header (host.ts)
  [400, 'cancelled'], // the caller went away mid-request (app.ts)
  [401, 'unauthorized'],
  [403, 'forbidden'],
  [404, 'not_found'],
  [408, 'request_timeout'], // headers too slow (host.ts)
  [431, 'headers_too_large'],
  [500, 'internal'],
  [503, 'auth_unavailable'],
];
/** A route whose URL is its own credential: no bearer check, so none of its refusals. */
export const PUBLIC_COMMON_ERRORS: readonly ErrorCode[] = COMMON_ERRORS.filter(([, c]) => c !== 'unauthorized' && c !== 'forbidden' && c !== 'auth_unavailable');

/**
 * A zod schema as JSON Schema 2020-12, without the `$schema` key (the document's dialect holds). A
 * query parameter's whole number, text to zod (`wholeNumberText`), is the integer it spells here:
 * what a caller puts in the URL, and what a client generator should type it as.
 */
export function jsonSchema(schema: $ZodType, io: 'input' | 'output'): Json {
  const override: JsonSchemaOverride = ({ zodSchema, jsonSchema: js }) => {
    const bounds = WHOLE_NUMBERS.get(zodSchema);
    if (!bounds) return;
    for (const k of Object.keys(js)) if (k !== 'description') delete (js as Json)[k];
    Object.assign(js, { type: 'integer', ...bounds });
  };
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'throw', override }) as Json;
  return rest;
}

/** Where the document keeps the envelope, once: every error answer refers to it. */
export const ERROR_ENVELOPE = '#/components/schemas/ErrorEnvelope';

/** The error envelope, any code: the document's one copy of it (`components.schemas.ErrorEnvelope`). */
export function envelopeSchema(): Json {
  return jsonSchema(
    z.strictObject({
      error: z.strictObject({
        code: z.string(),
        message: z.string(),
        request_id: z.string(),
        path: described(z.optional(z.string()), "a batch's first bad item: its path"),
        op: described(z.optional(z.string()), 'outcome_unknown: the op id of the change whose result was lost'),
      }),
    }),
    'output',
  );
}

/** The envelope with exactly `codes` allowed: a reference to it, narrowed by an `enum` on `code`. */
export function errorSchema(codes: readonly string[]): Json {
  return { allOf: [{ $ref: ERROR_ENVELOPE }, { properties: { error: { properties: { code: { enum: codes } } } } }] };
}

/** Hono's `:name` as OpenAPI's `{name}`. */
export const openapiPath = (path: string) => path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');

/** A route's codes and the common ones, by status, each list sorted and without repeats. */
export function errorsByStatus(e: RouteEntry): Map<number, string[]> {
  const all: ErrorCode[] = [...(e.permission.kind === 'public' ? PUBLIC_COMMON_ERRORS : COMMON_ERRORS), ...e.errors];
  const by = new Map<number, Set<string>>();
  for (const [status, code] of all) by.set(status, (by.get(status) ?? new Set()).add(code));
  return new Map([...by].sort(([a], [b]) => a - b).map(([s, codes]) => [s, [...codes].sort()]));
}

const PARAM_DESCRIPTIONS: Record<string, string> = {
  name: 'the MinecraftServer: 3 to 32 of a-z, 0-9 and -, no leading or trailing -',
  id: 'the upload session',
  ticket: 'the signed download ticket (the credential)',
};

function rawContent(raw: RawContent): Json {
  return Object.fromEntries(raw.contentTypes.map((t) => [t, { schema: { type: 'string', contentMediaType: t, description: raw.description } }]));
}

/** A header's value: text, but for the ones HTTP defines as a number. */
const headerSchema = (name: string): Json => (name.toLowerCase() === 'content-length' ? { type: 'integer', minimum: 0 } : { type: 'string' });

function headers(h: Record<string, HeaderSpec> | undefined): Json | undefined {
  if (!h) return undefined;
  return Object.fromEntries(Object.entries(h).map(([name, s]) => [name, { description: s.description, schema: headerSchema(name), ...(s.required ? { required: true } : {}) }]));
}

/** `Retry-After` on the error answers that carry it (lib/http/error-map.ts `retryAfterOf`). */
function retryAfterHeader(status: number, codes: readonly string[]): Json | undefined {
  const on = status === 429 ? codes : codes.filter((c) => (RETRY_AFTER_CODES as readonly string[]).includes(c));
  if (on.length === 0) return undefined;
  return { 'Retry-After': { description: `whole seconds to wait before trying again; sent with ${on.map((c) => `\`${c}\``).join(', ')}`, schema: { type: 'integer', minimum: 0 } } };
}

function parameters(e: RouteEntry, s: RouteSchemas): Json[] {
  const out: Json[] = [];
  for (const [, name] of e.path.matchAll(/:([A-Za-z_][A-Za-z0-9_]*)/g)) {
    out.push({ name, in: 'path', required: true, description: PARAM_DESCRIPTIONS[name!] ?? name, schema: { type: 'string' } });
  }
  for (const [name, schema] of Object.entries(s.query?._zod.def.shape ?? {})) {
    const js = jsonSchema(schema, 'input');
    const { description, ...rest } = js;
    const required = !z.safeParse(schema, undefined).success;
    out.push({ name, in: 'query', required, ...(description ? { description } : {}), schema: rest });
  }
  for (const [name, h] of Object.entries(s.requestHeaders ?? {})) {
    out.push({ name, in: 'header', required: h.required ?? false, description: h.description, schema: headerSchema(name) });
  }
  return out;
}

/** One error answer: its codes in words, its `Retry-After`, the envelope narrowed to its codes. */
function errorResponse(status: number, codes: readonly string[]): Json {
  const retry = retryAfterHeader(status, codes);
  return { description: codes.join(', '), ...(retry ? { headers: retry } : {}), content: { 'application/json': { schema: errorSchema(codes) } } };
}

/** `bad_request` and `cancelled` as `BadRequestOrCancelled`: a shared error answer's name in `components.responses`. */
const responseName = (codes: readonly string[]) => codes.map((c) => c.replace(/(?:^|_)([a-z0-9])/g, (_, ch: string) => ch.toUpperCase())).join('Or');

/**
 * The error answers more than one route gives alike (the same status and codes), each once in
 * `components.responses`, by name; a route refers to them. Most are the refusals every route shares
 * (COMMON_ERRORS); repeating them in each route was most of the document.
 */
function sharedErrors(routes: readonly RouteEntry[]): { components: Record<string, Json>; refOf: (status: number, codes: readonly string[]) => string | undefined } {
  const seen = new Map<string, number>();
  const key = (status: number, codes: readonly string[]) => `${status} ${codes.join(' ')}`;
  for (const e of routes) for (const [status, codes] of errorsByStatus(e)) seen.set(key(status, codes), (seen.get(key(status, codes)) ?? 0) + 1);
  const names = new Map<string, string>();
  const components: Record<string, Json> = {};
  for (const [k, n] of [...seen].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (n < 2) continue;
    const [status, ...codes] = k.split(' ');
    let name = responseName(codes);
    // A code answered with two statuses would name two answers alike: the status tells them apart.
    if (name in components) name += status;
    names.set(k, name);
    components[name] = errorResponse(Number(status), codes);
  }
  return { components, refOf: (status, codes) => names.get(key(status, codes)) };
}

function operation(id: string, e: RouteEntry, s: RouteSchemas, prose: RouteProse, shared: ReturnType<typeof sharedErrors>): Json {
  const responses: Json = {};
  for (const [status, r] of Object.entries(s.responses)) {
    const h = 'empty' in r ? undefined : headers(r.headers);
    const content = 'json' in r ? { 'application/json': { schema: jsonSchema(r.json, 'output') }, ...(r.raw ? rawContent(r.raw) : {}) } : 'raw' in r ? rawContent(r.raw) : undefined;
    responses[status] = { description: r.description, ...(h ? { headers: h } : {}), ...(content ? { content } : {}) };
  }
  for (const [status, codes] of errorsByStatus(e)) {
    const name = shared.refOf(status, codes);
    responses[String(status)] = name ? { $ref: `#/components/responses/${name}` } : errorResponse(status, codes);
  }
  const body = s.body && ('json' in s.body ? { required: true, content: { 'application/json': { schema: jsonSchema(s.body.json, 'input') } } } : { required: true, content: rawContent(s.body.raw) });
  const params = parameters(e, s);
  return {
    operationId: id,
    summary: prose.summary,
    tags: [e.fn],
    ...(e.permission.kind === 'public' ? { security: [] } : {}),
    ...(params.length ? { parameters: params } : {}),
    ...(s.body ? { requestBody: body } : {}),
    responses,
    'x-felis-function': e.fn,
    'x-felis-permission': e.permission,
    ...(e.event ? { 'x-felis-event-type': e.event.type } : {}),
  };
}

/** What the server answers on any path, before a route (host.ts): all `/healthz` can refuse. */
const HOST_ERRORS: readonly ErrorCode[] = [
  [400, 'bad_request'],
  [408, 'request_timeout'],
  [431, 'headers_too_large'],
];

/** Codes the CloudEvents entry answers itself (lib/http/event-entry.ts, parse.ts), before any route. */
const EVENT_CODES = ['event_batch', 'event_data_invalid', 'event_data_type', 'event_invalid', 'event_malformed', 'event_missing', 'event_type_unknown', 'too_large', 'unauthorized'];

/** The document for `tables`; `version` is the package's. */
export function buildDocument<T extends RouteTable>(tables: DocTables<T>, version: string): Json {
  const paths: Record<string, Json> = {
    '/healthz': {
      get: {
        operationId: 'healthz',
        summary: 'Liveness and readiness: answered before the routes load.',
        security: [],
        responses: {
          200: { description: 'up', content: { 'application/json': { schema: jsonSchema(z.strictObject({ status: z.literal('ok') }), 'output') } } },
          ...Object.fromEntries(HOST_ERRORS.map(([status, code]) => [status, errorResponse(status, [code])])),
        },
      },
    },
  };
  const eventTypes: string[] = [];
  const shared = sharedErrors(Object.values(tables.routes));
  for (const [id, e] of Object.entries(tables.routes)) {
    const p = (paths[openapiPath(e.path)] ??= {});
    p[e.method.toLowerCase()] = operation(id, e, tables.schemas[id]!, tables.prose[id]!, shared);
    if (e.event) eventTypes.push(e.event.type);
  }
  paths['/'] = {
    post: {
      operationId: 'cloudevents',
      summary: 'The CloudEvents entry (binary or structured mode), where Knative Triggers deliver.',
      description:
        `A request event is answered by the route its type names (x-felis-event-type), with its status mapped to Knative's delivery contract: ` +
        `only what a retry can fix is 404/409/429/5xx. Route event types: ${eventTypes.join(', ')}. Codes of the entry itself: ${EVENT_CODES.join(', ')}.`,
      requestBody: { required: true, content: { 'application/json': { schema: {} }, 'application/cloudevents+json': { schema: {} } } },
      responses: {
        '2XX': { description: "the route's answer", content: { 'application/json': { schema: {} } } },
        // The two ranges it answers, not `default`: a client (and the lint) wants the 4xx declared.
        '4XX': { description: 'a refusal, of the entry or of the route', content: { 'application/json': { schema: { $ref: ERROR_ENVELOPE } } } },
        '5XX': { description: 'a failure, of the entry or of the route', content: { 'application/json': { schema: { $ref: ERROR_ENVELOPE } } } },
      },
      'x-felis-event-types': eventTypes,
    },
  };
  return {
    openapi: '3.1.0',
    info: {
      title: 'felis-world',
      version,
      description: 'World files and world maintenance for Felis. Generated from lib/http/routes by `npm run openapi`.',
    },
    // Relative: the origin that served the document, where the routes are too (`npm start`, or an
    // ingress in front of the functions, host.ts); Swagger UI's Try-it-out calls there. Not the
    // request's own origin written in: behind Knative's proxies a function sees neither the scheme
    // nor the host the caller used, and the document stays one fixed file.
    servers: [{ url: '/', description: 'the origin that served this document' }],
    security: [{ bearer: [] }],
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'the shared token, or (kubernetes mode) a Kubernetes token for this API' } },
      schemas: { ErrorEnvelope: envelopeSchema() },
      responses: shared.components,
    },
    paths,
  };
}
