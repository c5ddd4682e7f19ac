import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { type Answer, checkedApp, checkedFetch, compileChecker, DOCUMENT, loadChecker } from './openapi-check.ts';

const envelope = (codes: string[]) => ({
  type: 'object',
  required: ['error'],
  properties: {
    error: { type: 'object', required: ['code', 'message', 'request_id'], properties: { code: { type: 'string', enum: codes }, message: { type: 'string' }, request_id: { type: 'string' } } },
  },
});
const json = (schema: object) => ({ description: '', content: { 'application/json': { schema } } });

/** A fixture document: a templated and a concrete path under one prefix, a shared schema by $ref, a download, a 204. */
const FIXTURE = {
  openapi: '3.1.0',
  info: { title: 'fixture', version: '1' },
  components: {
    schemas: { Upload: { type: 'object', required: ['id', 'size'], properties: { id: { type: 'string' }, size: { type: 'integer' } }, additionalProperties: false } },
    responses: { NotFound: json(envelope(['not_found'])) },
  },
  paths: {
    '/api/v1/servers/{name}/files/uploads/{id}': {
      get: { responses: { 200: json({ $ref: '#/components/schemas/Upload' }), 404: { $ref: '#/components/responses/NotFound' }, '5XX': json(envelope(['internal'])) } },
      delete: { responses: { 204: { description: 'gone' } } },
    },
    '/api/v1/servers/{name}/files/uploads': { post: { responses: { 201: json({ $ref: '#/components/schemas/Upload' }) } } },
    '/api/v1/servers/{name}/files/{what}': { get: { responses: { 200: json({ type: 'object', required: ['what'], properties: { what: { const: 'templated' } } }) } } },
    '/api/v1/servers/{name}/download': { get: { responses: { 200: { description: '', content: { 'application/zip': {} } } } } },
  },
};

const checker = compileChecker(FIXTURE);
const ok = (a: Partial<Answer> & Pick<Answer, 'method' | 'path' | 'status'>) => checker.check({ contentType: 'application/json; charset=utf-8', hasBody: true, ...a });
const upload = { json: { id: 'u1', size: 3 } };

test('a declared answer passes: templated path, $ref schemas and responses, a status range, HEAD as GET, a 204 and a download', () => {
  assert.deepEqual(ok({ method: 'GET', path: '/api/v1/servers/survival/files/uploads/u1', status: 200, body: upload }), []);
  assert.deepEqual(ok({ method: 'HEAD', path: '/api/v1/servers/survival/files/uploads/u1', status: 200, hasBody: false }), []);
  assert.deepEqual(ok({ method: 'GET', path: '/api/v1/servers/s/files/uploads/u1', status: 404, body: { json: { error: { code: 'not_found', message: 'no', request_id: 'r' } } } }), []);
  assert.deepEqual(ok({ method: 'GET', path: '/api/v1/servers/s/files/uploads/u1', status: 503, body: { json: { error: { code: 'internal', message: 'no', request_id: 'r' } } } }), []);
  assert.deepEqual(ok({ method: 'DELETE', path: '/api/v1/servers/s/files/uploads/u1', status: 204, contentType: null, hasBody: false }), []);
  assert.deepEqual(ok({ method: 'GET', path: '/api/v1/servers/s/download', status: 200, contentType: 'application/zip' }), []);
  // The concrete path wins over the template that also matches it.
  assert.deepEqual(ok({ method: 'POST', path: '/api/v1/servers/s/files/uploads', status: 201, body: upload }), []);
  assert.deepEqual(ok({ method: 'GET', path: '/api/v1/servers/s/files/x', status: 200, body: { json: { what: 'templated' } } }), []);
});

test('an undeclared status is a mismatch', () => {
  const m = ok({ method: 'GET', path: '/api/v1/servers/s/files/uploads/u1', status: 409, body: { json: { error: { code: 'not_found', message: 'x', request_id: 'r' } } } });
  assert.equal(m.length, 1);
  assert.match(m[0]!, /409 is not declared for GET \/api\/v1\/servers\/\{name\}\/files\/uploads\/\{id\} \(declared: 200, 404, 5XX\)/);
});

test('a body field of the wrong type, or one the schema does not allow, is a mismatch', () => {
  const m = ok({ method: 'GET', path: '/api/v1/servers/s/files/uploads/u1', status: 200, body: { json: { id: 'u1', size: '3' } } });
  assert.equal(m.length, 1);
  assert.match(m[0]!, /\/size must be integer/);
  assert.match(ok({ method: 'GET', path: '/api/v1/servers/s/files/uploads/u1', status: 200, body: { json: { id: 'u1', size: 3, extra: 1 } } })[0]!, /must NOT have additional properties/);
  assert.match(ok({ method: 'GET', path: '/api/v1/servers/s/files/uploads/u1', status: 200, body: { text: 'not json' } })[0]!, /the body is not JSON/);
});

test("an error code not in the route's enum is a mismatch", () => {
  const m = ok({ method: 'GET', path: '/api/v1/servers/s/files/uploads/u1', status: 404, body: { json: { error: { code: 'file_exists', message: 'x', request_id: 'r' } } } });
  assert.equal(m.length, 1);
  assert.match(m[0]!, /\/error\/code must be equal to one of the allowed values \(\["not_found"\]\)/);
});

test('an unknown route, an undeclared method, or an undeclared content type is a mismatch', () => {
  assert.match(ok({ method: 'GET', path: '/api/v1/nowhere', status: 200, body: { json: {} } })[0]!, /no path of the document matches \/api\/v1\/nowhere/);
  assert.match(ok({ method: 'PUT', path: '/api/v1/servers/s/files/uploads/u1', status: 200, body: upload })[0]!, /declares no PUT/);
  assert.match(ok({ method: 'GET', path: '/api/v1/servers/s/download', status: 200, contentType: 'text/plain' })[0]!, /Content-Type text\/plain is not declared \(declared: application\/zip\)/);
  assert.match(ok({ method: 'DELETE', path: '/api/v1/servers/s/files/uploads/u1', status: 204, body: { json: {} } })[0]!, /declares no body/);
});

test('a missing document is an error, not a skip; the checked-in one compiles', () => {
  const dir = mkdtempSync(join(tmpdir(), 'openapi-check-'));
  try {
    assert.throws(() => loadChecker(join(dir, 'openapi.json')), /openapi\.json is missing/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  assert.throws(() => compileChecker({ openapi: '3.0.3', paths: {} }), /not OpenAPI 3\.1/);
  loadChecker(DOCUMENT);
});

test('checkedApp: every answer of the app is checked on its way out, unchanged for the caller; assertClean lists the mismatches', async () => {
  const inner = new Hono();
  inner.get('/api/v1/servers/:name/files/uploads/:id', (c) => (c.req.param('id') === 'bad' ? c.json({ id: 1, size: 3 }) : c.json({ id: 'u1', size: 3 })));
  inner.get('/api/v1/servers/:name/download', (c) => c.body(new Uint8Array(10), 200, { 'Content-Type': 'application/zip' }));
  inner.get('/docs', (c) => c.html('<p>the reference is not the API</p>'));
  const logged: string[] = [];
  const { app, assertClean } = checkedApp(inner, checker, (l) => logged.push(l));
  const good = await app.request('/api/v1/servers/s/files/uploads/u1');
  assert.deepEqual(await good.json(), { id: 'u1', size: 3 });
  assert.equal((await app.request('/api/v1/servers/s/download')).status, 200);
  assert.equal((await app.request('/docs')).status, 200);
  await assertClean();
  const bad = await app.request('/api/v1/servers/s/files/uploads/bad');
  assert.deepEqual(await bad.json(), { id: 1, size: 3 }, 'the caller gets the answer as it was');
  assert.equal((await app.request('/api/v1/elsewhere')).status, 404);
  await assert.rejects(assertClean(), (err: Error) => {
    assert.match(err.message, /2 answer\(s\) do not match docs\/openapi.json \(2 distinct\)/);
    assert.match(err.message, /uploads\/bad → 200: the body does not match the declared schema: \/id must be string/);
    assert.match(err.message, /GET \/api\/v1\/elsewhere → 404: no path of the document matches/);
    return true;
  });
  assert.equal(logged.length, 2, 'each mismatch is logged when it happens');
});

test('checkedApp: a JSON body that never ends is reported as unchecked, not passed', async () => {
  const inner = new Hono();
  let stop!: () => void;
  inner.get('/api/v1/servers/:name/files/uploads/:id', () => {
    const body = new ReadableStream<Uint8Array>({ start: (ctl) => void (stop = () => ctl.close()) });
    return new Response(body, { headers: { 'Content-Type': 'application/json' } });
  });
  const { app, assertClean } = checkedApp(inner, checker, () => {});
  const r = await app.request('/api/v1/servers/s/files/uploads/u1');
  assert.equal(r.status, 200);
  await assert.rejects(assertClean(50), /GET \/api\/v1\/servers\/s\/files\/uploads\/u1 → 200: the JSON body was still arriving 50 ms after the tests ended/);
  stop();
  await r.body?.cancel();
});

test("checkedFetch: the answers of a server in another process, checked on the caller's side", async () => {
  const inner = new Hono();
  inner.get('/api/v1/servers/:name/files/uploads/:id', (c) => c.json({ id: c.req.param('id'), size: c.req.param('id') === 'bad' ? 'x' : 3 }));
  const server = await new Promise<ReturnType<typeof serve>>((res) => {
    const s = serve({ fetch: inner.fetch, port: 0, hostname: '127.0.0.1' }, () => res(s));
  });
  try {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const { fetch: f, assertClean } = checkedFetch(checker, () => {});
    assert.deepEqual(await (await f(`${url}/api/v1/servers/s/files/uploads/u1`)).json(), { id: 'u1', size: 3 });
    await assertClean();
    assert.equal((await f(new URL(`${url}/api/v1/servers/s/files/uploads/bad`), { method: 'GET' })).status, 200);
    await assert.rejects(assertClean(), /uploads\/bad → 200: the body does not match the declared schema: \/size must be integer/);
  } finally {
    await new Promise((res) => server.close(res));
  }
});

test('a route the document does not have may only be answered as the apps answer one: 404 not_found in the envelope', () => {
  const env = (code: string) => ({ json: { error: { code, message: 'no such route', request_id: 'r' } } });
  assert.deepEqual(ok({ method: 'GET', path: '/api/v1/nowhere', status: 404, body: env('not_found') }), []);
  assert.deepEqual(ok({ method: 'PUT', path: '/api/v1/servers/s/files/uploads/u1', status: 404, body: env('not_found') }), []);
  assert.match(ok({ method: 'GET', path: '/api/v1/nowhere', status: 404, body: env('file_exists') })[0]!, /no path of the document matches/);
  assert.match(ok({ method: 'GET', path: '/api/v1/nowhere', status: 404, contentType: 'text/plain', body: { text: 'Not Found' } })[0]!, /no path of the document matches/);
});

test('a path of the document with a method it does not declare may only be answered 405 method_not_allowed in the envelope', () => {
  const env = (code: string) => ({ json: { error: { code, message: 'PUT is not a method of …', request_id: 'r' } } });
  assert.deepEqual(ok({ method: 'PUT', path: '/api/v1/servers/s/files/uploads/u1', status: 405, body: env('method_not_allowed') }), []);
  assert.match(ok({ method: 'PUT', path: '/api/v1/servers/s/files/uploads/u1', status: 405, body: env('not_found') })[0]!, /declares no PUT/);
  assert.match(ok({ method: 'GET', path: '/api/v1/nowhere', status: 405, body: env('method_not_allowed') })[0]!, /no path of the document matches/);
});
