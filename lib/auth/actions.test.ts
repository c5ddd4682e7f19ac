import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FUNCTIONS } from '../../functions/index.ts';
import { acceptedEvents } from '../http/event-entry.ts';
import { permissionFor, ROUTE_PERMISSIONS } from '../http/routes/permissions.ts';
import type { RouteModule } from '../http/serve.ts';
import { routeKit } from '../testing/route-kit.ts';
import { EVENT_PERMISSIONS } from './actions.ts';

const all: RouteModule = (deps) => (app) => {
  for (const m of Object.values(FUNCTIONS)) m(deps)(app);
};

/** The routes the functions register under /api/, as `METHOD pattern`. */
function registeredRoutes(): string[] {
  const { app } = routeKit(all);
  return app.routes.filter((r) => r.method !== 'ALL' && r.path.startsWith('/api/')).map((r) => `${r.method} ${r.path}`);
}

test('every route every function registers has a permission (a missing one is refused in kubernetes mode)', () => {
  const routes = registeredRoutes();
  assert.ok(routes.length >= Object.keys(FUNCTIONS).length, routes.join(', '));
  const missing = routes.filter((r) => {
    const [method, path] = r.split(' ') as [string, string];
    return permissionFor(method, path) === undefined;
  });
  assert.deepEqual(missing, []);
});

test('the check above can fail: a route outside the table is found', () => {
  assert.equal(permissionFor('GET', '/api/v1/servers/:name/not-a-route'), undefined);
  assert.equal(permissionFor('POST', '/api/v1/servers/:name/files'), undefined, 'the method is part of the key');
});

test('every event a function handles directly (not through a route) has a permission', () => {
  const { app } = routeKit(all);
  const open = acceptedEvents(app)
    .filter((e) => e.kind === 'open')
    .map((e) => e.type);
  assert.ok(open.length > 0);
  assert.deepEqual(
    open.filter((t) => !EVENT_PERMISSIONS[t]),
    [],
  );
});

test('reads of a world are get files, every change to it is update files; no server route grants settling', () => {
  for (const [route, p] of Object.entries(ROUTE_PERMISSIONS)) {
    const [method, path] = route.split(' ') as [string, string];
    if (p.kind !== 'server' || !path.includes('/file')) continue;
    // An upload session's status is a read (get); every other upload route changes the world.
    if (method !== 'GET') assert.equal(p.verb, path.endsWith('/download') ? 'get' : 'update', route);
    else assert.equal(p.verb, 'get', route);
  }
  assert.deepEqual(permissionFor('POST', '/api/v1/restore-chains/settle'), { kind: 'nonresource', path: '/felis-world/settle', verb: 'post' });
});
