/**
 * Reading a CloudEvent off an HTTP delivery, binary or structured mode (the sender chooses, so both
 * must work), with the cloudevents SDK; then our own checks, which the SDK does not make on
 * receive: the attributes are valid, the event has its own id (the SDK would invent one, which
 * would defeat deduplication), and it is one event, not a batch. Pure apart from the SDK.
 * @module
 */
import { type CloudEvent, HTTP } from 'cloudevents';
import * as z from '../schema.ts';
import { EventRejected } from './rejected.ts';

export { EventRejected };

export interface ParsedEvent {
  id: string;
  source: string;
  type: string;
  subject?: string;
  data: unknown;
}

const STRUCTURED = 'application/cloudevents+json';
const BATCH = 'application/cloudevents-batch+json';

function mediaType(headers: Record<string, string>): string {
  return (headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
}

/** `headers` with lower-case names; `body` the raw text (JSON data is parsed by the SDK). */
export function parseEvent(headers: Record<string, string>, body: string): ParsedEvent {
  const media = mediaType(headers);
  if (media === BATCH) throw new EventRejected('event_batch', 'batched CloudEvents are not accepted; send one event per request');
  if (media === STRUCTURED) {
    let raw: unknown;
    try {
      raw = JSON.parse(body);
    } catch {
      throw new EventRejected('event_malformed', 'the structured CloudEvent is not valid JSON');
    }
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new EventRejected('event_malformed', 'the structured CloudEvent is not a JSON object');
    const id = (raw as { id?: unknown }).id;
    if (typeof id !== 'string' || id === '') throw new EventRejected('event_invalid', 'the CloudEvent has no id');
  } else if (!headers['ce-id']) {
    throw new EventRejected('event_missing', 'no CloudEvent in the request: send ce-* headers (binary mode) or application/cloudevents+json');
  }

  let ev: CloudEvent<unknown>;
  try {
    ev = HTTP.toEvent({ headers, body }) as CloudEvent<unknown>;
    ev.validate();
  } catch (err) {
    throw new EventRejected('event_invalid', `not a valid CloudEvent: ${firstLine(err)}`);
  }
  // The SDK reads an unknown spec version as 1.0; an event of another version may mean other things.
  if (ev.specversion !== '1.0') throw new EventRejected('event_invalid', `CloudEvents spec version ${ev.specversion} is not supported; send 1.0`);
  // Binary mode with a non-JSON content type leaves data as text: our data is always JSON.
  const ct = ev.datacontenttype;
  if (ev.data !== undefined && ct !== undefined && !/^application\/(.+\+)?json$/i.test(ct.split(';')[0]!.trim())) {
    throw new EventRejected('event_data_type', `the event data must be application/json, not ${ct}`);
  }
  return { id: ev.id, source: ev.source, type: ev.type, ...(ev.subject ? { subject: ev.subject } : {}), data: ev.data };
}

function firstLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0]!.slice(0, 200);
}

/** What a request event carries: the same parts an HTTP request does. */
const requestParts = z.strictObject({
  /** The MinecraftServer's name (the `:name` of the route). */
  server: z.optional(z.string()),
  /** The `?path=` of the route. */
  path: z.optional(z.string()),
  /** The JSON body of the route, as sent over HTTP. */
  body: z.optional(z.unknown()),
  /** The `:id` of a route that names one thing of a server (an undo-trash record). */
  id: z.optional(z.string()),
  /** The `?force=` of the lock route. */
  force: z.optional(z.boolean()),
});
export const requestData = z.catchall(
  requestParts,
  // Any other field is a query parameter of the route (`limit`, `q`, `depth`, `parents` …): a text,
  // a number or a flag, as the route's event declares it may carry (lib/http/event-entry.ts judges
  // which; the route's own schema judges the value as it would `?name=` with its text).
  z.union([z.string(), z.number(), z.boolean()]),
);
/** The fields of a request event's data that are not query parameters. */
export const REQUEST_DATA_PARTS: ReadonlySet<string> = new Set(['server', 'path', 'body', 'id', 'force']);
/** Its parts, and its query parameters under their names. */
export type RequestData = z.output<typeof requestParts> & Readonly<Record<string, unknown>>;

export function parseRequestData(data: unknown): RequestData {
  const r = requestData.safeParse(data ?? {});
  if (!r.success) {
    const issue = r.error.issues[0]!;
    const where = issue.path.length ? issue.path.join('.') : 'data';
    throw new EventRejected('event_data_invalid', `event data: ${where}: ${issue.message}`);
  }
  return r.data;
}
