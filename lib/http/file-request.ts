/**
 * Reading a file route's inputs: the server name, `?path=`, and a JSON body, each refused with the
 * envelope code a caller can act on before any Job exists.
 * @module
 */
import type { Context } from 'hono';
import type { $ZodType, output } from 'zod/v4/core';
import { DomainError } from '../errors.ts';
import { IS_ROOT, pathRefusal, worldPath } from '../protocol/world-path.ts';
import { ApiError, badRequest } from './envelope.ts';

const SERVER_NAME = /^[a-z0-9](?:[a-z0-9-]{1,30})[a-z0-9]$/;
/** JSON bodies are small; the write route's, with up to 1 MiB of base64 content, has its own limit (write-body.ts). */
export const MAX_JSON_BODY = 1 << 20;

export function serverName(c: Context): string {
  const name = c.req.param('name') ?? '';
  if (!SERVER_NAME.test(name)) throw new ApiError(400, 'bad_name', 'invalid server name');
  return name;
}

const PATH_REQUIRED = 'the ?path= query parameter is required';

/**
 * `?path=`: required except for listings (empty = the root), by the one path rule
 * (lib/protocol/world-path.ts: a leading `/` is the world folder). Decoded strictly: a broken
 * percent-escape or bytes that are not UTF-8 are refused, where a lenient decoder would keep the
 * text literally and create a file named `%FF`.
 */
export function queryPath(c: Context, required: boolean): string {
  const sent = sentQueryPath(c);
  if (required && sent === '') throw badRequest(PATH_REQUIRED);
  return checkPath(sent);
}

/** `?path=` as the caller sent it (decoded), `` when absent. */
export function sentQueryPath(c: Context): string {
  return rawQueryParam(c.req.url, 'path') ?? '';
}

/**
 * The refusal of the root where an op needs a path inside it: none sent is a missing parameter,
 * `/` (or another spelling of the root) a `bad_path` naming it.
 */
export function rootRefusal(sent: string): ApiError {
  return sent === '' ? badRequest(PATH_REQUIRED) : new ApiError(400, 'bad_path', pathRefusal(sent, IS_ROOT));
}

/** The first `name` parameter of a URL's query, strictly decoded; undefined when absent. */
export function rawQueryParam(url: string, name: string): string | undefined {
  const q = url.indexOf('?');
  if (q < 0) return undefined;
  const hash = url.indexOf('#', q);
  for (const pair of url.slice(q + 1, hash < 0 ? undefined : hash).split('&')) {
    const eq = pair.indexOf('=');
    const key = strictDecode(eq < 0 ? pair : pair.slice(0, eq));
    if (key !== name) continue;
    const value = strictDecode(eq < 0 ? '' : pair.slice(eq + 1));
    if (value === undefined) throw badRequest(`the ?${name}= query parameter is not valid percent-encoded UTF-8`);
    return value;
  }
  return undefined;
}

const fatalUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Form-style query decoding (`+` is a space) that fails instead of guessing: every `%` must start
 * two hex digits, and the bytes must be well-formed UTF-8 (no overlong forms such as `%C0%AF`, no
 * surrogates, no truncated sequences). Undefined on any failure.
 */
export function strictDecode(raw: string): string | undefined {
  const text = raw.replace(/\+/g, ' ');
  if (!text.includes('%')) return text;
  if (/%(?![0-9A-Fa-f]{2})/.test(text)) return undefined;
  try {
    // A raw URL's unescaped characters are ASCII (the URL parser escapes the rest); escape any
    // other one as UTF-8 too, so that every character becomes one latin1 byte below.
    const escaped = text.replace(/[^\x00-\x7f]+/g, (m) => encodeURIComponent(m));
    const bytes = Buffer.from(
      escaped.replace(/%([0-9A-Fa-f]{2})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16))),
      'latin1',
    );
    return fatalUtf8.decode(bytes);
  } catch {
    return undefined;
  }
}

/**
 * A path as the Job takes it, by the one path rule (lib/protocol/world-path.ts): leading `/`s
 * dropped, refused (400 bad_path, naming what was sent) before any Job when a `..` climbs out of
 * the world or no file can have it (a NUL byte, which could not even reach the Job's argv, a name
 * over 255 bytes, over 4096 bytes in all). Everything else is the Job's to judge.
 */
export function checkPath(sent: string): string {
  const p = worldPath(sent);
  if (p.refusal !== undefined) throw new ApiError(400, 'bad_path', p.refusal);
  return p.path;
}

/**
 * A path the call creates (an upload's, a new folder's, a copy's or a move's destination):
 * `checkPath`, and no name in it with a control or bidirectional control character.
 */
export function checkNewPath(sent: string): string {
  const p = worldPath(sent, true);
  if (p.refusal !== undefined) throw new ApiError(400, 'bad_path', p.refusal);
  return p.path;
}

/** `checkPath` (`checkNewPath` for an item the call creates) for one item of many: its refusal names the item, in the envelope's `path`. */
export function checkItemPath(sent: string, created = false): string {
  const p = worldPath(sent, created);
  if (p.refusal !== undefined) throw new DomainError('bad_path', 'invalid', p.refusal, { details: { path: sent } });
  return p.path;
}

/** A JSON body, at most `max` bytes (1 MiB), validated by a strict schema (unknown fields refused); absent, `{}` when every field is optional. */
export async function jsonBody<T extends $ZodType>(c: Context, schema: T, max = MAX_JSON_BODY): Promise<output<T>> {
  const len = Number(c.req.header('content-length') ?? NaN);
  if (len > max) throw tooLargeBody(max);
  const raw = await readLimited(c.req.raw, max);
  let value: unknown;
  if (raw.trim() === '') {
    // A body whose fields are all optional may be left out, as `{}`.
    const empty = await schema['~standard'].validate({});
    if (empty.issues) throw badRequest('a JSON body is required');
    return empty.value as output<T>;
  }
  try {
    value = JSON.parse(raw);
  } catch {
    throw badRequest('the body is not valid JSON');
  }
  // The schema's Standard Schema face: the same issues and messages as its safeParse, without this
  // module (which the serving shell loads before it listens) importing the schema library.
  const parsed = await schema['~standard'].validate(value);
  if (parsed.issues) {
    const issue = parsed.issues[0];
    const where = issue?.path?.length ? issue.path.map((k) => (typeof k === 'object' ? k.key : k)).join('.') + ': ' : '';
    throw badRequest(`invalid request: ${where}${issue?.message ?? 'invalid'}`);
  }
  return parsed.value as output<T>;
}

/** The caller closed the connection before its body arrived: its own doing, not a server failure. */
export class CallerGoneError extends Error {
  constructor(options?: { cause?: unknown }) {
    super('the caller went away before its request body arrived', options);
    this.name = 'CallerGoneError';
  }
}

const tooLargeBody = (max: number) => new ApiError(413, 'too_large', `the request body is larger than ${max >> 20} MiB`);

async function readLimited(req: Request, max: number): Promise<string> {
  if (!req.body) return '';
  const chunks: Buffer[] = [];
  let n = 0;
  try {
    for await (const chunk of req.body as AsyncIterable<Uint8Array>) {
      n += chunk.length;
      if (n > max) throw tooLargeBody(max);
      chunks.push(Buffer.from(chunk));
    }
  } catch (err) {
    if (err instanceof ApiError) throw err;
    // The only way the incoming stream fails is the connection ending before the body did.
    throw new CallerGoneError({ cause: err });
  }
  return Buffer.concat(chunks).toString('utf8');
}
