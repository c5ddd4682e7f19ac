import assert from 'node:assert/strict';
import { test } from 'node:test';
import { allowedMethods, pathMatches } from './allowed-methods.ts';

test("Hono's patterns: a :param takes one non-empty segment (its {regexp} if any), a trailing * the rest", () => {
  const cases: [string, string, boolean][] = [
    ['/api/v1/servers/:name/files', '/api/v1/servers/survival/files', true],
    ['/api/v1/servers/:name/files', '/api/v1/servers//files', false],
    ['/api/v1/servers/:name/files', '/api/v1/servers/survival/files/x', false],
    ['/api/v1/servers/:name/files', '/api/v1/servers/survival', false],
    ['/api/v1/servers/:name{[a-z]+}/x', '/api/v1/servers/abc/x', true],
    ['/api/v1/servers/:name{[a-z]+}/x', '/api/v1/servers/ab1/x', false],
    ['/api/*', '/api/v1/anything/at/all', true],
    ['/healthz', '/healthz', true],
    ['/healthz', '/healthz/', false],
  ];
  for (const [pattern, path, want] of cases) assert.equal(pathMatches(pattern, path), want, `${pattern} ~ ${path}`);
});

test('allowedMethods: every method a route answers at the path, HEAD with GET, middleware ignored', () => {
  const routes = [
    { method: 'ALL', path: '/api/*' },
    { method: 'PUT', path: '/api/v1/servers/:name/file' },
    { method: 'GET', path: '/api/v1/servers/:name/file' },
    { method: 'DELETE', path: '/api/v1/servers/:name/file' },
    { method: 'POST', path: '/api/v1/servers/:name/files/copy' },
  ];
  assert.deepEqual(allowedMethods(routes, '/api/v1/servers/s1/file'), ['DELETE', 'GET', 'HEAD', 'PUT']);
  assert.deepEqual(allowedMethods(routes, '/api/v1/servers/s1/files/copy'), ['POST']);
  assert.deepEqual(allowedMethods(routes, '/api/v1/nothing'), []);
});
