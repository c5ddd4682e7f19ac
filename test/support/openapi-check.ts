/**
 * The API document as a contract the end-to-end tests hold every answer to: `docs/openapi.json`
 * compiled with ajv (JSON Schema 2020-12, OpenAPI 3.1's dialect), and one answer checked against
 * it. Strict: the route (method and path template), the status, the content type and, for JSON,
 * the body must each be declared; an error body is the envelope with a code from the route's enum,
 * because that is how the document declares it. `checkedApp` puts the check in front of a host app
 * (test/support/stack.ts), and `checkedFetch` behind the caller when the functions run in another
 * process (`npm start`), so that every answer the tests receive is held to it.
 * @module
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
// The named export: the default one is the CommonJS module object to TypeScript under nodenext.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { Hono } from 'hono';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const DOCUMENT = join(ROOT, 'docs/openapi.json');

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** One answer as the checker sees it: `body` is the parsed JSON, when the answer is JSON. */
export interface Answer {
  method: string;
  /** The request path, without the query. */
  path: string;
  status: number;
  contentType: string | null;
  /** Whether the answer has a body at all (a 204 has none). */
  hasBody: boolean;
  /** Present when the body was read: the JSON value, or the text that failed to parse. */
  body?: { json: unknown } | { text: string };
}

export interface Checker {
  /** What is wrong with `a` against the document; empty when nothing is. */
  check(a: Answer): string[];
}

type Json = Record<string, any>;

/** `a/b~c` as a JSON Pointer token inside a URI fragment. */
const token = (s: string) => encodeURIComponent(s.replace(/~/g, '~0').replace(/\//g, '~1'));

interface Template {
  template: string;
  re: RegExp;
  /** Literal characters: a concrete path beats a templated one (`/files/uploads` over `/files/{x}`). */
  literal: number;
}

function templateOf(template: string): Template {
  const parts = template.split(/(\{[^}/]+\})/);
  const re = parts.map((p) => (/^\{[^}/]+\}$/.test(p) ? '[^/]+' : p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('');
  return { template, re: new RegExp(`^${re}$`), literal: parts.filter((p) => !p.startsWith('{')).join('').length };
}

const mediaType = (ct: string | null) => (ct ?? '').split(';')[0]!.trim().toLowerCase();
export const isJsonType = (ct: string | null) => {
  const t = mediaType(ct);
  return t === 'application/json' || t.endsWith('+json');
};

/** A checker for `doc` (an OpenAPI 3.1 document, already parsed). */
export function compileChecker(doc: Json): Checker {
  if (typeof doc.openapi !== 'string' || !doc.openapi.startsWith('3.1')) throw new Error(`the document is not OpenAPI 3.1 (openapi: ${JSON.stringify(doc.openapi)})`);
  // `format` is an annotation in 2020-12 unless a vocabulary asserts it; OpenAPI's keywords
  // (discriminator, example, xml) are not JSON Schema's, hence not strict.
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  ajv.addSchema(doc, 'openapi.json');
  // Compiling every declared schema now: a document ajv cannot read fails at once, not mid-suite.
  const validators = new Map<string, ValidateFunction>();
  const validator = (pointer: string) => {
    const known = validators.get(pointer);
    if (known) return known;
    const v = ajv.compile({ $ref: `openapi.json#${pointer}` });
    validators.set(pointer, v);
    return v;
  };
  /** Follows a local `$ref` (responses, path items): the node and its pointer. */
  const deref = (node: Json, pointer: string): { node: Json; pointer: string } => {
    for (let hops = 0; typeof node?.$ref === 'string'; hops++) {
      const ref = node.$ref as string;
      if (!ref.startsWith('#/') || hops > 10) throw new Error(`unsupported $ref ${ref} at ${pointer}`);
      pointer = ref
        .slice(1)
        .split('/')
        .map((t) => token(t.replace(/~1/g, '/').replace(/~0/g, '~')))
        .join('/');
      node = ref
        .slice(2)
        .split('/')
        .reduce((n: any, t) => n?.[t.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
      if (node === undefined) throw new Error(`$ref ${ref} points at nothing`);
    }
    return { node, pointer };
  };
  const templates = Object.keys(doc.paths ?? {})
    .map(templateOf)
    .sort((a, b) => b.literal - a.literal);
  for (const t of templates) {
    for (const m of METHODS) {
      const responses = doc.paths[t.template]?.[m]?.responses;
      if (!responses) continue;
      for (const [status, r] of Object.entries(responses)) {
        const { node, pointer } = deref(r as Json, `/paths/${token(t.template)}/${m}/responses/${token(status)}`);
        for (const [type, media] of Object.entries(node.content ?? {})) if ((media as Json).schema !== undefined) validator(`${pointer}/content/${token(type)}/schema`);
      }
    }
  }

  return {
    check(a: Answer): string[] {
      const where = `${a.method} ${a.path} → ${a.status}`;
      const t = templates.find((t) => t.re.test(a.path));
      if (!t) return unrouted(a) ? [] : [`${where}: no path of the document matches ${a.path}`];
      const item = deref(doc.paths[t.template], `/paths/${token(t.template)}`);
      const method = a.method.toLowerCase();
      // HEAD is GET without a body, as Hono answers it.
      const m = item.node[method] ? method : method === 'head' && item.node.get ? 'get' : undefined;
      if (!m) return unrouted(a) || wrongMethod(a) ? [] : [`${where}: ${t.template} declares no ${a.method}`];
      const responses: Json = item.node[m].responses ?? {};
      const s = String(a.status);
      const key = s in responses ? s : `${s[0]}XX` in responses ? `${s[0]}XX` : 'default' in responses ? 'default' : undefined;
      if (!key) return [`${where}: ${a.status} is not declared for ${a.method.toUpperCase()} ${t.template} (declared: ${Object.keys(responses).join(', ') || 'none'})`];
      const { node: res, pointer } = deref(responses[key], `${item.pointer}/${m}/responses/${token(key)}`);
      const content: Json = res.content ?? {};
      const types = Object.keys(content);
      const got = mediaType(a.contentType);
      if (types.length === 0) {
        if (a.hasBody && a.contentType) return [`${where}: the document declares no body, but the answer has one (${a.contentType})`];
        return [];
      }
      if (!got) return [`${where}: no Content-Type; the document declares ${types.join(', ')}`];
      const declared = types.find((d) => d.toLowerCase() === got) ?? types.find((d) => d.endsWith('/*') && got.startsWith(d.slice(0, -1).toLowerCase())) ?? types.find((d) => d === '*/*');
      if (!declared) return [`${where}: Content-Type ${got} is not declared (declared: ${types.join(', ')})`];
      if (!isJsonType(a.contentType) || !a.body || content[declared].schema === undefined) return [];
      if ('text' in a.body) return [`${where}: the body is not JSON: ${a.body.text.slice(0, 200)}`];
      const v = validator(`${pointer}/content/${token(declared)}/schema`);
      if (v(a.body.json)) return [];
      const errors = (v.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message}${e.keyword === 'enum' ? ` (${JSON.stringify(e.params.allowedValues)})` : ''}`);
      return [`${where}: the body does not match the declared schema: ${errors.join('; ')}; body: ${JSON.stringify(a.body.json).slice(0, 300)}`];
    },
  };
}

/** The checker for the checked-in document. A missing or unreadable document is an error, never a skip. */
export function loadChecker(file = DOCUMENT): Checker {
  if (!existsSync(file)) throw new Error(`${file} is missing: every end-to-end answer is checked against it`);
  return compileChecker(JSON.parse(readFileSync(file, 'utf8')) as Json);
}

/**
 * A route the document does not have is answered as every app answers one (lib/http/app.ts):
 * 404, the envelope, code `not_found`. That is the one answer allowed outside the document.
 */
function unrouted(a: Answer): boolean {
  if (a.status !== 404 || !isJsonType(a.contentType)) return false;
  if (!a.body) return true; // the body is checked when it arrives
  const e = 'json' in a.body ? (a.body.json as { error?: { code?: unknown; message?: unknown; request_id?: unknown } } | null)?.error : undefined;
  return !!e && e.code === 'not_found' && typeof e.message === 'string' && typeof e.request_id === 'string';
}

/**
 * A path of the document called with a method it does not declare is answered 405, the envelope,
 * code `method_not_allowed` (lib/http/app.ts): the document has no operation to hold it.
 */
function wrongMethod(a: Answer): boolean {
  if (a.status !== 405 || !isJsonType(a.contentType)) return false;
  if (!a.body) return true;
  const e = 'json' in a.body ? (a.body.json as { error?: { code?: unknown } } | null)?.error : undefined;
  return e?.code === 'method_not_allowed';
}

/** The reference itself, not the API it describes. */
const NOT_API = (path: string) => path === '/openapi.json' || path === '/docs' || path.startsWith('/docs/');

/** Answers held to a checker as they pass: each mismatch logged at once and kept for `assertClean`. */
export interface AnswerLog {
  /** Checks `res` (a JSON body from a clone, which the caller's copy never waits on; other bodies unread). */
  observe(method: string, path: string, res: Response): void;
  /** Waits for the checks of bodies still arriving (at most `ms`), then throws listing every mismatch. */
  assertClean(ms?: number): Promise<void>;
}

export function answerLog(checker: Checker, log: (line: string) => void = (l) => console.error(l)): AnswerLog {
  const mismatches: string[] = [];
  const pending = new Map<Promise<void>, string>();
  const record = (a: Answer) => {
    for (const m of checker.check(a)) {
      mismatches.push(m);
      log(`openapi mismatch: ${m}`);
    }
  };
  return {
    observe(method, path, res) {
      // CORS preflights are the browser's protocol (lib/http/cors.ts), not operations of the API.
      if (NOT_API(path) || method === 'OPTIONS') return;
      const base = { method, path, status: res.status, contentType: res.headers.get('content-type'), hasBody: res.body !== null };
      // Other bodies are never read, so downloads are not buffered.
      if (!res.body || !isJsonType(base.contentType) || method === 'HEAD') return record(base);
      // The clone tees the stream: the caller's copy flows on while this one is read.
      const p = res
        .clone()
        .text()
        .then((text) => {
          let body: Answer['body'];
          try {
            body = { json: JSON.parse(text) };
          } catch {
            body = { text };
          }
          record({ ...base, body });
        })
        .catch(() => {
          // The body broke off (the connection ended): nothing whole to check.
        })
        .finally(() => pending.delete(p));
      pending.set(p, `${method} ${path} → ${res.status}`);
    },
    async assertClean(ms = 5_000) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.all(pending.keys()), new Promise((res) => (timer = setTimeout(res, ms)))]);
      clearTimeout(timer);
      for (const what of pending.values()) mismatches.push(`${what}: the JSON body was still arriving ${ms} ms after the tests ended, so it was never checked`);
      const distinct = [...new Set(mismatches)];
      if (distinct.length) throw new Error(`${mismatches.length} answer(s) do not match docs/openapi.json (${distinct.length} distinct):\n${distinct.map((m) => `  - ${m}`).join('\n')}`);
    },
  };
}

type Fetch = (req: Request, env?: any) => Response | Promise<Response>;

/**
 * A handler that streamed straight to Node's response (a download: `c.env.outgoing`, for its
 * backpressure) hands Hono a placeholder; what the caller got is on the Node response: its status
 * and headers stand for the answer (the body was the stream itself, never read here).
 */
function sentResponse(res: Response, env: unknown): Response {
  const outgoing = (env as { outgoing?: { headersSent?: boolean; statusCode?: number; getHeaders?: () => Record<string, unknown> } } | undefined)?.outgoing;
  if (!res.headers.has('x-hono-already-sent') || !outgoing?.headersSent || !outgoing.getHeaders) return res;
  const headers = new Headers();
  for (const [k, v] of Object.entries(outgoing.getHeaders())) if (v !== undefined) headers.set(k, String(v));
  return new Response(outgoing.statusCode === 204 ? null : 'streamed', { status: outgoing.statusCode ?? 200, headers });
}

/** `inner` (a host app) behind a Hono middleware that checks each answer on its way out. */
export function checkedApp(inner: { fetch: Fetch }, checker: Checker, log?: (line: string) => void): { app: Hono<any> } & Pick<AnswerLog, 'assertClean'> {
  const answers = answerLog(checker, log);
  const app = new Hono<any>();
  app.use(async (c, next) => {
    await next();
    answers.observe(c.req.method, new URL(c.req.url).pathname, sentResponse(c.res, c.env));
  });
  app.all('*', (c) => inner.fetch(c.req.raw, c.env));
  return { app, assertClean: answers.assertClean };
}

/** `fetch`, checking each answer: for tests whose functions run in another process (`npm start`). */
export function checkedFetch(checker: Checker, log?: (line: string) => void): { fetch: typeof fetch } & Pick<AnswerLog, 'assertClean'> {
  const answers = answerLog(checker, log);
  const checked = async (input: string | URL | Request, init?: RequestInit) => {
    const res = await fetch(input, init);
    const method = init?.method ?? (input instanceof Request ? input.method : 'GET');
    answers.observe(method.toUpperCase(), new URL(input instanceof Request ? input.url : input).pathname, res);
    return res;
  };
  return { fetch: checked as typeof fetch, assertClean: answers.assertClean };
}
