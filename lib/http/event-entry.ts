/**
 * The CloudEvents entry of every function: `POST /`, where Knative Triggers and SinkBindings
 * deliver. A function takes the event types the route table gives its routes (registered by
 * lib/http/routes/register.ts), and any it handles directly; a request event is turned into the
 * very HTTP request the route already serves (method, `:name`, `?path=`, body, and the caller's
 * bearer token) and answered by that route, so events and HTTP share every check and every error.
 * The answer follows Knative's delivery contract: only what a retry can fix is 404/409/429/5xx.
 * @module
 */
import type { Context, Hono } from 'hono';
import { asActor } from '../actor.ts';
import { DomainError } from '../errors.ts';
import { deliveryStatus, envelopeCode } from '../events/delivery.ts';
import { type ParsedEvent, REQUEST_DATA_PARTS, type RequestData } from '../events/parse.ts';
import { EventRejected } from '../events/rejected.ts';
import { eventKey, requestDigest, withEvent } from '../events/scope.ts';
import type { Logger } from '../log.ts';
import type { Env } from './app.ts';
import { authOf } from './auth.ts';
import { sendError } from './envelope.ts';

/** An event handled by one of the function's HTTP routes. */
export interface RouteEvent {
  kind: 'route';
  method: 'GET' | 'PUT' | 'POST' | 'DELETE';
  /** The route's path for this event's data; throws EventRejected when the data lacks a part. */
  target: (d: RequestData) => string;
  /**
   * Whether the route reads a JSON body (the event's `data.body`); `'optional'` when every field
   * of that body is optional, so the event may leave it out as the HTTP caller may.
   */
  body?: boolean | 'optional';
}

/**
 * An event handled directly: only for events a Knative source sends whose handling is safe
 * whoever asks, like one settle pass. In token mode it needs no token (a source cannot send ours);
 * in kubernetes mode the delivery's token needs the event type's permission (lib/auth/actions.ts).
 */
export interface OpenEvent {
  kind: 'open';
  handle: (ev: ParsedEvent, c: Context<Env>) => Promise<Response>;
}

export type EventTable = Record<string, RouteEvent | OpenEvent>;

/** Events carry JSON plus a write's base64 content of up to 1 MiB (1.34 MiB of text); this leaves room for both. */
export const MAX_EVENT_BYTES = 2 << 20;
/**
 * An event without a token (a PingSource tick, an ApiServerSource Job change in token mode)
 * carries no file: this bounds what a stranger can make a function read.
 */
export const MAX_OPEN_EVENT_BYTES = 256 << 10;

const tables = new WeakMap<Hono<Env>, Map<string, RouteEvent | OpenEvent>>();

/**
 * The event reader, with the cloudevents SDK under it, loaded when the first event arrives: most
 * requests to a woken function are plain HTTP, and loading the SDK takes 18–20 ms of CPU.
 */
let reader: Promise<typeof import('../events/parse.ts')> | undefined;
const loadReader = () => (reader ??= import('../events/parse.ts'));

/**
 * Adds `table`'s event types to the app's `POST /` entry, creating the entry the first time, so
 * several functions served in one app (`npm start`) share one entry with all their types.
 */
export function acceptEvents(app: Hono<Env>, logger: Logger, table: EventTable): void {
  let types = tables.get(app);
  if (!types) {
    const mine = new Map<string, RouteEvent | OpenEvent>();
    types = mine;
    tables.set(app, mine);
    app.post('/', (c) => entry(app, mine, logger, c));
  }
  for (const [type, handler] of Object.entries(table)) {
    if (types.has(type)) throw new Error(`event type ${type} is accepted twice`);
    types.set(type, handler);
  }
}

/** The event types an app accepts, and how each is handled (`route` or `open`). */
export function acceptedEvents(app: Hono<Env>): Array<{ type: string; kind: 'route' | 'open' }> {
  return [...(tables.get(app) ?? [])].map(([type, h]) => ({ type, kind: h.kind }));
}

async function entry(app: Hono<Env>, types: Map<string, RouteEvent | OpenEvent>, logger: Logger, c: Context<Env>): Promise<Response> {
  const headers: Record<string, string> = {};
  c.req.raw.headers.forEach((v, k) => {
    headers[k] = v;
  });
  const auth = authOf(app);
  if (!auth) throw new Error('the event entry needs the app made by createApp');
  // The caller first, before a byte of the body is read: a stranger costs a header check, not 2 MiB
  // of reading and a log line. A token, when sent, must be valid. Without one only an event handled
  // directly (a Knative source's tick, token mode only) may come, and it is small.
  const open = [...types.values()].some((h) => h.kind === 'open');
  const ceType = headers['ce-type'];
  const mayBeOpen = auth.mode === 'token' && open && (ceType === undefined || types.get(ceType)?.kind === 'open');
  if (headers.authorization !== undefined) await auth.authenticate(headers.authorization, true);
  else if (!mayBeOpen) throw new DomainError('unauthorized', 'unauthorized', 'a valid bearer token is required');
  const { parseEvent, parseRequestData } = await loadReader();
  let ev: ParsedEvent;
  let handler: RouteEvent | OpenEvent | undefined;
  try {
    ev = parseEvent(headers, await readBody(c.req.raw, headers.authorization === undefined ? MAX_OPEN_EVENT_BYTES : MAX_EVENT_BYTES));
    handler = types.get(ev.type);
    if (!handler) throw new EventRejected('event_type_unknown', `this function does not accept events of type ${clip(ev.type)}; it accepts ${[...types.keys()].join(', ')}`);
  } catch (err) {
    if (err instanceof EventRejected) {
      logger.info({ request_id: c.get('requestId'), code: err.code, reason: clip(err.message) }, 'refused an event');
      return sendError(c, 400, err.code, err.message);
    }
    throw err;
  }
  const key = eventKey(ev.source, ev.id);
  logger.info({ request_id: c.get('requestId'), event_id: clip(ev.id), event_source: clip(ev.source), event_type: clip(ev.type), event_key: key }, 'event received');
  if (handler.kind === 'open') {
    // Kubernetes mode: the delivery's own token (Knative OIDC) must carry the event's permission.
    const actor = await auth.checkEvent(headers.authorization, ev.type);
    return asActor(actor, () => handler.handle(ev, c));
  }
  if (headers.authorization === undefined) throw new DomainError('unauthorized', 'unauthorized', 'a valid bearer token is required');

  let url: string;
  let data: RequestData;
  try {
    data = parseRequestData(ev.data);
    url = handler.target(data);
    if (!handler.body && data.body !== undefined) throw new EventRejected('event_data_invalid', `events of type ${ev.type} carry no body`);
    if (handler.body === true && data.body === undefined) throw new EventRejected('event_data_invalid', `events of type ${ev.type} need data.body`);
  } catch (err) {
    if (err instanceof EventRejected) return sendError(c, 400, err.code, err.message);
    throw err;
  }
  const body = handler.body && data.body !== undefined ? JSON.stringify(data.body) : undefined;
  const inner = new Request(new URL(url, 'http://localhost'), {
    method: handler.method,
    headers: {
      authorization: headers.authorization,
      'x-request-id': c.get('requestId'),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    body,
    signal: c.req.raw.signal,
  });
  // A redelivery carries the same request: the Job an earlier delivery made is matched on both.
  const res = await withEvent({ key, request: requestDigest(handler.method, url, body) }, () => app.fetch(inner, c.env));
  if (res.status < 400) return res;
  // Error answers are small envelopes: read to see which refusal it is.
  const text = await res.text();
  return new Response(text, { status: deliveryStatus(res.status, envelopeCode(text)), headers: res.headers });
}

async function readBody(req: Request, max: number): Promise<string> {
  const tooLarge = () => new DomainError('too_large', 'too_large', `the event is larger than ${max >> 10} KiB`);
  const len = Number(req.headers.get('content-length') ?? NaN);
  if (len > max) throw tooLarge();
  if (!req.body) return '';
  const chunks: Buffer[] = [];
  let n = 0;
  for await (const chunk of req.body as AsyncIterable<Uint8Array>) {
    n += chunk.length;
    if (n > max) throw tooLarge();
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Event attributes are the sender's text: logged and echoed at most this long. */
const LOGGED_CHARS = 256;
const clip = (s: string) => (s.length > LOGGED_CHARS ? `${s.slice(0, LOGGED_CHARS)}… (${s.length} chars)` : s);

/** What a route's event may carry besides its server: `?path=`, `?force=`, the names of an op's query, and the route's `:id`. */
export interface EventTakes {
  path?: boolean;
  force?: boolean;
  /** The names of the route's query parameters the event may carry (beside `path` and `force`). */
  query?: readonly string[];
  /** The route's path has an `:id`: the event's `id` fills it (and is required). */
  id?: boolean;
}

/** `/api/v1/servers/<server>/<rest>` with `?path=`, `?force=` and the op's query where the route takes them. */
export function serverRoute(rest: string, takes: EventTakes = {}) {
  return (d: RequestData): string => {
    if (!d.server) throw new EventRejected('event_data_invalid', 'event data: server is required');
    if (!takes.path && d.path !== undefined) throw new EventRejected('event_data_invalid', 'event data: path is not used by this event type');
    if (!takes.force && d.force !== undefined) throw new EventRejected('event_data_invalid', 'event data: force is not used by this event type');
    if (!takes.id && d.id !== undefined) throw new EventRejected('event_data_invalid', 'event data: id is not used by this event type');
    if (takes.id && !d.id) throw new EventRejected('event_data_invalid', 'event data: id is required');
    const query = Object.keys(d).filter((k) => !REQUEST_DATA_PARTS.has(k));
    for (const k of query) {
      if (!takes.query?.includes(k)) throw new EventRejected('event_data_invalid', `event data: ${k} is not used by this event type`);
    }
    const q = new URLSearchParams();
    if (d.path !== undefined) q.set('path', d.path);
    if (d.force !== undefined) q.set('force', String(d.force));
    // As the HTTP caller would send them: the route's own schema judges them the same way.
    for (const k of takes.query ?? []) if (d[k] !== undefined) q.set(k, String(d[k]));
    const qs = q.toString();
    // The route itself judges the id (its shape), as it judges an HTTP caller's.
    const at = takes.id ? rest.replace(':id', encodeURIComponent(d.id!)) : rest;
    return `/api/v1/servers/${encodeURIComponent(d.server)}/${at}${qs ? `?${qs}` : ''}`;
  };
}

export const routeEvent = (method: RouteEvent['method'], target: RouteEvent['target'], body: RouteEvent['body'] = false): RouteEvent => ({ kind: 'route', method, target, body });

/** A route that takes no server: the event's data must be empty. */
export function noServer(path: string) {
  return (d: RequestData): string => {
    if (Object.keys(d).some((k) => k !== 'body')) throw new EventRejected('event_data_invalid', 'events of this type carry no data');
    return path;
  };
}

const SERVER_PREFIX = '/api/v1/servers/:name/';

/**
 * The event of a route of the table (lib/http/routes/table.ts): a route under a server is
 * addressed by the event's `server` (and `path`/`force`/the op's query where the route takes them, and
 * `id` for a route with one `:id` segment that says so); a route without path parameters takes no
 * data. Any other route cannot be an event.
 */
export function routeEventFor(method: RouteEvent['method'], path: string, takes: EventTakes, body: RouteEvent['body']): RouteEvent {
  const rest = path.startsWith(SERVER_PREFIX) ? path.slice(SERVER_PREFIX.length) : undefined;
  const params = rest?.split('/').filter((s) => s.startsWith(':')) ?? [];
  const byId = takes.id === true && params.length === 1 && params[0] === ':id';
  if (rest !== undefined && (params.length === 0 || byId)) {
    return routeEvent(method, serverRoute(rest, { path: takes.path, force: takes.force, query: takes.query, id: byId }), body);
  }
  if (!path.includes(':')) return routeEvent(method, noServer(path), body);
  throw new Error(`${method} ${path}: no event can address a route with these path parameters`);
}
