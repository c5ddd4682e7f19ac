/**
 * What a browser panel meets first, through the whole stack (HTTP → the functions → client-node →
 * the cluster): CORS for a listed origin and none for another, 405 with `Allow` for a known path's
 * unknown method, and a copy whose all-optional body is left out running as `{}`.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Stack, startStack, TOKEN } from './support/stack.ts';

const PANEL = 'http://127.0.0.1:5173';

describe('HTTP manners through the cluster', () => {
  let s: Stack;
  before(async () => {
    s = await startStack({ corsOrigins: [PANEL] });
  });
  after(async () => {
    await s?.close();
  });

  test('a preflight from the listed origin is 204 without a bearer; another origin gets no CORS header', async () => {
    const preflight = (origin: string) =>
      fetch(`${s.url}/api/v1/servers/survival/files/upload?path=a.txt`, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'PUT', 'access-control-request-headers': 'authorization,content-digest' },
      });
    const ok = await preflight(PANEL);
    assert.equal(ok.status, 204);
    assert.equal(ok.headers.get('access-control-allow-origin'), PANEL);
    assert.match(ok.headers.get('access-control-allow-methods') ?? '', /PUT/);
    assert.match(ok.headers.get('access-control-allow-headers') ?? '', /Content-Digest/);
    assert.ok(Number(ok.headers.get('access-control-max-age')) > 0);
    const other = await preflight('http://127.0.0.2:5173');
    assert.equal(other.status, 401);
    assert.deepEqual(
      [...other.headers.keys()].filter((k) => k.startsWith('access-control-')),
      [],
    );
    const get = await s.call('GET', '/api/v1/servers/survival/files?path=', undefined, { origin: PANEL });
    assert.equal(get.status, 200, get.text);
    assert.equal(get.headers.get('access-control-allow-origin'), PANEL);
    assert.match(get.headers.get('access-control-expose-headers') ?? '', /X-Request-Id/);
  });

  test('a known path with a wrong method is 405 with Allow', async () => {
    const r = await s.call('PATCH', '/api/v1/servers/survival/file?path=server.properties');
    assert.equal(r.status, 405, r.text);
    assert.equal(r.body.error.code, 'method_not_allowed');
    assert.equal(r.headers.get('allow'), 'DELETE, GET, HEAD, PUT');
  });

  test('copy with no body at all copies beside the file', async () => {
    const r = await fetch(`${s.url}/api/v1/servers/survival/files/copy?path=eula.txt`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } });
    const text = await r.text();
    assert.equal(r.status, 200, text);
    assert.equal(JSON.parse(text).to, 'eula copy.txt');
    assert.equal(readFileSync(join(s.world, 'eula copy.txt'), 'utf8'), readFileSync(join(s.world, 'eula.txt'), 'utf8'));
  });
});
