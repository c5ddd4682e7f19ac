import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Hono } from 'hono';
import { z } from 'zod';
import { FUNCTIONS } from '../../../functions/index.ts';
import { envelopeOf, routeKit, TOKEN } from '../../testing/route-kit.ts';
import type { Env } from '../app.ts';
import { sendJson } from '../envelope.ts';
import { acceptedEvents } from '../event-entry.ts';
import type { RouteModule } from '../serve.ts';
import { buildDocument } from './openapi.ts';
import { permissionsOf, ROUTE_PERMISSIONS } from './permissions.ts';
import { registerRoutes } from './register.ts';
import { SCHEMAS } from './schemas.ts';
import { routeSummary } from './summary.ts';
import { ROUTE_PROSE, ROUTES } from './table.ts';
import type { ProseTable, RouteTable, SchemaTable } from './types.ts';

/** The routes an app has under /api/, as `METHOD pattern`, sorted. */
function apiRoutes(app: Hono<Env>): string[] {
  return app.routes
    .filter((r) => r.method !== 'ALL' && r.path.startsWith('/api/'))
    .map((r) => `${r.method} ${r.path}`)
    .sort();
}

/** What the table says function `fn` serves, and which event types carry its routes. */
function tableOf(routes: RouteTable, fn: string) {
  const mine = Object.values(routes).filter((r) => r.fn === fn);
  return { routes: mine.map((r) => `${r.method} ${r.path}`).sort(), events: mine.flatMap((r) => (r.event ? [r.event.type] : [])).sort() };
}

/** Differences between what `module` registers and what the table says `fn` serves. */
function disagreement(module: RouteModule, fn: string): string[] {
  const { app } = routeKit(module);
  const want = tableOf(ROUTES, fn);
  const routes = apiRoutes(app);
  const events = acceptedEvents(app)
    .filter((e) => e.kind === 'route')
    .map((e) => e.type)
    .sort();
  return [
    ...routes.filter((r) => !want.routes.includes(r)).map((r) => `${fn} registers ${r}, not in the table`),
    ...want.routes.filter((r) => !routes.includes(r)).map((r) => `${fn} does not register ${r}`),
    ...events.filter((t) => !want.events.includes(t)).map((t) => `${fn} accepts ${t}, not in the table`),
    ...want.events.filter((t) => !events.includes(t)).map((t) => `${fn} does not accept ${t}`),
  ];
}

test('every function registers exactly its routes of the table, and accepts exactly their event types', () => {
  const fns = new Set(Object.values(ROUTES).map((r) => r.fn));
  assert.deepEqual([...fns].sort(), Object.keys(FUNCTIONS).sort(), 'the functions the table names are the functions there are');
  for (const [fn, module] of Object.entries(FUNCTIONS)) assert.deepEqual(disagreement(module, fn), [], fn);
});

test('the check above can fail: a route registered by hand, or a route left out, is found', () => {
  const extra: RouteModule = (deps) => (app) => {
    FUNCTIONS.holder!(deps)(app);
    app.get('/api/v1/servers/:name/extra', (c) => c.text('x'));
  };
  assert.deepEqual(disagreement(extra, 'holder'), ['holder registers GET /api/v1/servers/:name/extra, not in the table']);
  assert.equal(disagreement(FUNCTIONS.start!, 'holder').length, 8, 'two routes and two event types each way');
});

test('a route cannot be half-added: a missing handler, or one for a route of another function, is an error', () => {
  const { app, deps } = routeKit(() => () => {});
  const tables = { routes: ROUTES, schemas: SCHEMAS };
  assert.throws(() => registerRoutes(app, deps.logger, tables, 'holder', { 'holder.get': (c) => c.text('') }), /no handler for route holders\.list/);
  assert.throws(() => registerRoutes(app, deps.logger, tables, 'holder', { 'server.stop': (c) => c.text('') }), /handlers for routes it does not serve: server\.stop/);
});

/** Each function's route declarations as its folder holds them (functions/<fn>/routes.ts and schemas.ts). */
async function declarations(): Promise<{ fn: string; routes: RouteTable; prose: Record<string, unknown>; schemas: Record<string, unknown> }[]> {
  const dir = fileURLToPath(new URL('../../../functions/', import.meta.url));
  const out = [];
  for (const fn of readdirSync(dir).sort()) {
    if (!existsSync(join(dir, fn, 'routes.ts'))) continue;
    const { routes, prose } = await import(pathToFileURL(join(dir, fn, 'routes.ts')).href);
    const { schemas } = await import(pathToFileURL(join(dir, fn, 'schemas.ts')).href);
    out.push({ fn, routes, prose, schemas });
  }
  return out;
}

test('each function declares its own routes, each once, and the collectors hold every declaration as it is', async () => {
  const ids: string[] = [];
  for (const d of await declarations()) {
    for (const [id, e] of Object.entries(d.routes)) {
      assert.equal(e.fn, d.fn, `${id} is declared in functions/${d.fn}/ but served by ${e.fn}`);
      assert.equal(ROUTES[id as keyof typeof ROUTES], e, `${id}: the table holds another entry (declared twice?) or none`);
      assert.equal(ROUTE_PROSE[id as keyof typeof ROUTE_PROSE], d.prose[id], `${id}: the prose collected is not its function's`);
      assert.equal(SCHEMAS[id as keyof typeof SCHEMAS], d.schemas[id], `${id}: the schemas collected are not its function's`);
    }
    assert.deepEqual(Object.keys(d.prose), Object.keys(d.routes), `functions/${d.fn}: prose for exactly its routes`);
    assert.deepEqual(Object.keys(d.schemas).sort(), Object.keys(d.routes).sort(), `functions/${d.fn}: schemas for exactly its routes`);
    ids.push(...Object.keys(d.routes));
  }
  assert.deepEqual(ids.sort(), Object.keys(ROUTES).sort(), 'every route of the table is declared by one function, once');
});

test('the permission map is the table: every route, its permission, nothing else', () => {
  assert.equal(Object.keys(ROUTE_PERMISSIONS).length, Object.keys(ROUTES).length);
  for (const r of Object.values(ROUTES)) assert.deepEqual(ROUTE_PERMISSIONS[`${r.method} ${r.path}`], r.permission);
});

/** A function the table does not have: one route, with a query, a body, an answer and an event. */
const FIXTURE = {
  'fixture.poke': {
    fn: 'fixture',
    method: 'POST',
    path: '/api/v1/servers/:name/poke',
    permission: { kind: 'server', subresource: 'state', verb: 'update' },
    errors: [[409, 'too_poked']],
    event: { type: 'dev.felis.fixture.poke' },
  },
} as const satisfies RouteTable;
const FIXTURE_SCHEMAS = {
  'fixture.poke': {
    query: z.object({ times: z.string({ error: 'times is required' }).regex(/^\d+$/, { error: 'times must be a number' }) }),
    body: { json: z.strictObject({ loud: z.boolean() }) },
    responses: { 200: { description: 'poked', json: z.strictObject({ name: z.string(), times: z.number(), loud: z.boolean() }) } },
  },
} satisfies SchemaTable<typeof FIXTURE>;
const FIXTURE_PROSE = {
  'fixture.poke': { summary: 'Poke a server.', answer: '`{name, times, loud}` — a fixture' },
} satisfies ProseTable<typeof FIXTURE>;

test('a route added to a table drives registration, permission, event type, the document and the summary', async () => {
  const tables = { routes: FIXTURE, schemas: FIXTURE_SCHEMAS, prose: FIXTURE_PROSE };
  const k = routeKit(
    (deps) => (app) =>
      registerRoutes(app, deps.logger, tables, 'fixture', {
        'fixture.poke': async (c, input) => {
          const { times } = input.query() as { times: string };
          const { loud } = (await input.body()) as { loud: boolean };
          return sendJson(c, 200, { name: c.req.param('name'), times: Number(times), loud });
        },
      }),
  );
  // Registration, with the query and body parsed by the table's schemas.
  assert.deepEqual(apiRoutes(k.app), ['POST /api/v1/servers/:name/poke']);
  const ok = await k.call('POST', '/api/v1/servers/survival/poke?times=3', { loud: true });
  assert.equal(ok.status, 200, ok.text);
  assert.deepEqual(ok.body, { name: 'survival', times: 3, loud: true });
  const badQuery = await k.call('POST', '/api/v1/servers/survival/poke?times=x', { loud: true });
  assert.deepEqual([badQuery.status, envelopeOf(badQuery).code, envelopeOf(badQuery).message], [400, 'bad_request', 'times must be a number']);
  const badBody = await k.call('POST', '/api/v1/servers/survival/poke?times=1', { loud: 'yes' });
  assert.deepEqual([badBody.status, envelopeOf(badBody).code], [400, 'bad_request']);
  assert.match(envelopeOf(badBody).message, /^invalid request: loud: /);
  // The event type, carrying the body to the same route.
  assert.deepEqual(acceptedEvents(k.app), [{ type: 'dev.felis.fixture.poke', kind: 'route' }]);
  const ev = await k.app.request('/', {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', 'ce-specversion': '1.0', 'ce-id': 'e1', 'ce-source': '/t', 'ce-type': 'dev.felis.fixture.poke' },
    body: JSON.stringify({ server: 'creative', body: { loud: false } }),
  });
  // The route needs ?times=, which no event of this type can carry: refused by the route's own schema.
  assert.equal(ev.status, 400);
  assert.equal(JSON.parse(await ev.text()).error.message, 'times is required');
  // The permission.
  assert.deepEqual(permissionsOf(FIXTURE), { 'POST /api/v1/servers/:name/poke': { kind: 'server', subresource: 'state', verb: 'update' } });
  // The document: the path, its query, body, answer, and the route's codes beside the common ones.
  const doc = buildDocument(tables, '0.0.0') as any;
  const op = doc.paths['/api/v1/servers/{name}/poke'].post;
  assert.equal(op.operationId, 'fixture.poke');
  assert.equal(op['x-felis-event-type'], 'dev.felis.fixture.poke');
  assert.deepEqual(
    op.parameters.map((p: any) => `${p.in} ${p.name} ${p.required}`),
    ['path name true', 'query times true'],
  );
  assert.deepEqual(op.requestBody.content['application/json'].schema.required, ['loud']);
  assert.deepEqual(op.responses['200'].content['application/json'].schema.required, ['name', 'times', 'loud']);
  // An error answer: the shared envelope, narrowed to the route's codes for that status.
  const codes = (status: string) => {
    const { allOf } = op.responses[status].content['application/json'].schema;
    assert.equal(allOf[0].$ref, '#/components/schemas/ErrorEnvelope');
    return allOf[1].properties.error.properties.code.enum;
  };
  assert.deepEqual(codes('409'), ['too_poked']);
  assert.ok(codes('401').includes('unauthorized'));
  assert.ok(doc.paths['/'].post['x-felis-event-types'].includes('dev.felis.fixture.poke'));
  // The summary.
  assert.equal(
    routeSummary(tables).split('\n')[2],
    '| fixture | `POST /api/v1/servers/{name}/poke?times=` body `{loud}` | update state | `dev.felis.fixture.poke` | `{name, times, loud}` — a fixture |',
  );
});
