import assert from 'node:assert/strict';
import { test } from 'node:test';
import { routeKit, TOKEN } from '../testing/route-kit.ts';
import { CORS_EXPOSED_HEADERS, CORS_MAX_AGE_SECONDS, CORS_METHODS, CORS_REQUEST_HEADERS, corsOriginsFromEnv, parseCorsOrigins } from './cors.ts';
import { ROUTES } from './routes/table.ts';
import type { RouteModule } from './serve.ts';

const PANEL = 'https://panel.example.com';
const OTHER = 'https://evil.example.net';

const routes: RouteModule = () => (app) => {
  app.put('/api/v1/thing', (c) => c.json({ ok: true }));
  app.get('/api/v1/thing', (c) => c.json({ ok: true }));
};

function kit(origins = [PANEL]) {
  return routeKit(routes, { corsOrigins: origins });
}

const preflight = (origin: string) =>
  new Request('http://x/api/v1/thing', {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': 'PUT', 'access-control-request-headers': 'authorization, content-digest' },
  });

const corsHeaders = (h: Headers) => [...h.keys()].filter((k) => k.startsWith('access-control-'));

test('FELIS_CORS_ORIGINS: exact origins, as a browser sends them; empty or unset is off', () => {
  assert.deepEqual(parseCorsOrigins(undefined), []);
  assert.deepEqual(parseCorsOrigins(' , '), []);
  assert.deepEqual(parseCorsOrigins('https://Panel.Example.com/, http://localhost:3000,https://panel.example.com:443'), [PANEL, 'http://localhost:3000']);
  for (const bad of ['*', 'null', 'panel.example.com', 'https://panel.example.com/app', 'https://u:p@panel.example.com', 'https://panel.example.com/?a=1', 'ftp://panel.example.com']) {
    assert.throws(() => parseCorsOrigins(bad), /is not an origin/, bad);
  }
  assert.throws(() => corsOriginsFromEnv({ FELIS_CORS_ORIGINS: 'https://x.test/path' }), /invalid configuration FELIS_CORS_ORIGINS: .*is not an origin/);
});

test('a preflight from an allowed origin is 204 before authentication, with the methods, headers and max age', async () => {
  const r = await kit().app.request(preflight(PANEL));
  assert.equal(r.status, 204);
  const h = r.headers;
  assert.equal(h.get('access-control-allow-origin'), PANEL);
  assert.deepEqual(h.get('access-control-allow-methods')?.split(','), [...CORS_METHODS]);
  assert.deepEqual(h.get('access-control-allow-headers')?.split(','), [...CORS_REQUEST_HEADERS]);
  assert.equal(h.get('access-control-max-age'), String(CORS_MAX_AGE_SECONDS));
  assert.match(h.get('vary') ?? '', /Origin/);
  assert.equal(h.get('access-control-allow-credentials'), null, 'a bearer is a header, not a cookie: no credentials mode');
});

test('another origin gets no CORS header: its preflight goes on to authentication', async () => {
  const r = await kit().app.request(preflight(OTHER));
  assert.equal(r.status, 401);
  assert.deepEqual(corsHeaders(r.headers), []);
  assert.match(r.headers.get('vary') ?? '', /Origin/);
  const get = await kit().call('GET', '/api/v1/thing', undefined, { origin: OTHER });
  assert.equal(get.status, 200);
  assert.deepEqual(corsHeaders(get.headers), []);
});

test('answers to an allowed origin name it and expose what a panel reads, refusals included', async () => {
  const k = kit();
  const ok = await k.call('GET', '/api/v1/thing', undefined, { origin: PANEL });
  assert.equal(ok.status, 200);
  assert.equal(ok.headers.get('access-control-allow-origin'), PANEL);
  assert.deepEqual(ok.headers.get('access-control-expose-headers')?.split(','), [...CORS_EXPOSED_HEADERS]);
  for (const h of ['X-Request-Id', 'Content-Range', 'ETag', 'Retry-After', 'Preference-Applied', 'Location']) assert.ok(CORS_EXPOSED_HEADERS.includes(h as never), h);
  // A browser can read a refusal only when it carries the header too.
  const denied = await k.app.request(new Request('http://x/api/v1/thing', { headers: { origin: PANEL } }));
  assert.equal(denied.status, 401);
  assert.equal(denied.headers.get('access-control-allow-origin'), PANEL);
  const missing = await k.call('GET', '/api/v1/nothing', undefined, { origin: PANEL });
  assert.equal(missing.status, 404);
  assert.equal(missing.headers.get('access-control-allow-origin'), PANEL);
});

test('CORS off: no header for any origin, and a preflight is not answered on its own', async () => {
  const k = kit([]);
  const r = await k.app.request(preflight(PANEL));
  assert.equal(r.status, 401);
  assert.deepEqual(corsHeaders(r.headers), []);
  const ok = await k.app.request(new Request('http://x/api/v1/thing', { headers: { origin: PANEL, authorization: `Bearer ${TOKEN}` } }));
  assert.equal(ok.status, 200);
  assert.deepEqual(corsHeaders(ok.headers), []);
  assert.equal(ok.headers.get('vary'), null);
});

test('the preflight allows every method the route table uses', () => {
  const used = new Set(Object.values(ROUTES).map((r) => r.method));
  for (const m of used) assert.ok((CORS_METHODS as readonly string[]).includes(m), `${m} is used by a route but not allowed by the preflight`);
});
