import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { createLogger } from '../log.ts';
import { DOCS_CSP } from './api-docs.ts';
import { createApp } from './app.ts';

const ROOT = new URL('../../', import.meta.url);
const app = createApp({ logger: createLogger('test', { LOG_LEVEL: 'silent' }), token: () => 'secret-token' }, () => {});

test('GET /openapi.json: the checked-in document, without auth', async () => {
  const r = await app.request('/openapi.json');
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('content-type'), 'application/json; charset=utf-8');
  assert.deepEqual(await r.json(), JSON.parse(readFileSync(new URL('docs/openapi.json', ROOT), 'utf8')));
});

test('GET /openapi.json stays at most 4 KB per operation as served: errors are shared components, not repeated per route', async () => {
  // A bound per operation, not a fixed total, so that adding a route does not break it; an error
  // response spelt out in every route instead of referenced would add ~250 bytes per code per route
  // and pass it.
  const r = await app.request('/openapi.json');
  const bytes = (await r.arrayBuffer()).byteLength;
  const doc = JSON.parse(readFileSync(new URL('docs/openapi.json', ROOT), 'utf8')) as { paths: Record<string, Record<string, unknown>> };
  const operations = Object.values(doc.paths).reduce((n, item) => n + Object.keys(item).filter((k) => ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'].includes(k)).length, 0);
  assert.ok(operations > 0);
  assert.ok(bytes <= 4_000 * operations, `${bytes} bytes for ${operations} operations`);
});

test("GET /docs: the page, without auth, loading only this origin's assets under a self-only CSP", async () => {
  const r = await app.request('/docs');
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('content-type'), 'text/html; charset=utf-8');
  assert.equal(r.headers.get('content-security-policy'), DOCS_CSP);
  assert.match(DOCS_CSP, /^default-src 'self';/);
  const html = await r.text();
  const refs = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
  assert.deepEqual(refs.sort(), ['/docs/assets/docs-init.js', '/docs/assets/favicon-32x32.png', '/docs/assets/swagger-ui-bundle.js', '/docs/assets/swagger-ui.css']);
  // Every one of them is served.
  for (const ref of refs) assert.equal((await app.request(ref)).status, 200, ref);
  assert.doesNotMatch(html, /<script>|<style|style="/, 'no inline script or style (the CSP refuses them)');
});

test("/docs/assets: swagger-ui-dist's files with their content types", async () => {
  const dist = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  const js = await app.request('/docs/assets/swagger-ui-bundle.js');
  assert.equal(js.status, 200);
  assert.equal(js.headers.get('content-type'), 'text/javascript; charset=utf-8');
  assert.equal(js.headers.get('x-content-type-options'), 'nosniff');
  assert.deepEqual(Buffer.from(await js.arrayBuffer()), readFileSync(join(dist, 'swagger-ui-bundle.js')));
  const css = await app.request('/docs/assets/swagger-ui.css');
  assert.equal(css.headers.get('content-type'), 'text/css; charset=utf-8');
  const init = await app.request('/docs/assets/docs-init.js');
  assert.equal(init.headers.get('content-type'), 'text/javascript; charset=utf-8');
  assert.match(await init.text(), /SwaggerUIBundle\(\{ url: '\/openapi.json'/);
});

test("/docs/assets: a name not listed, or a path leaving the folder, is the envelope's 404", async () => {
  for (const p of [
    '/docs/assets/package.json',
    '/docs/assets/swagger-ui-bundle.js.map',
    '/docs/assets/..%2fpackage.json',
    '/docs/assets/..%2F..%2F..%2Fpackage.json',
    '/docs/assets/%2e%2e%2f%2e%2e%2fdocs%2fopenapi.json',
    '/docs/assets/../../package.json',
    '/docs/assets/constructor',
    '/docs/assets/',
  ]) {
    const r = await app.request(p);
    assert.equal(r.status, 404, p);
    assert.equal(((await r.json()) as { error: { code: string } }).error.code, 'not_found', p);
  }
});

test('the API itself still needs the token', async () => {
  const r = await app.request('/api/v1/holders');
  assert.equal(r.status, 401);
});
