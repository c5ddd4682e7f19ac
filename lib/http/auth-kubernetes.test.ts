/**
 * Kubernetes mode through the real app shell and real routes, with a fake reviewer (the fast path):
 * who may call what, the codes of each refusal, the actor in audit events and log lines, and
 * events authorized as the route they reach or with the settle permission.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FUNCTIONS } from '../../functions/index.ts';
import { KubeAuthorizer } from '../auth/authorizer.ts';
import type { AuthConfig } from '../auth/config.ts';
import { FakeReviewer } from '../auth/fake-reviewer.test-kit.ts';
import type { Settler } from '../maintenance/settle.ts';
import { jsonCall } from '../testing/json-call.ts';
import { envelopeOf, FakeGates, fakeEditor, routeKit } from '../testing/route-kit.ts';
import { kubernetesAuth } from './auth.ts';
import type { RouteModule } from './serve.ts';

const VIEWER = 'system:serviceaccount:minecraft:viewer';
const EDITOR = 'alice';
const OPERATOR = 'system:serviceaccount:ops:oncall';
const SETTLER = 'system:serviceaccount:minecraft:settle-trigger-oidc';
const CFG: AuthConfig = { mode: 'kubernetes', audience: 'felis-world', eventAudience: 'felis-world', namespace: 'minecraft', allowTtlMs: 10_000, denyTtlMs: 5_000, cacheSize: 100 };

function reviewer(): FakeReviewer {
  return new FakeReviewer()
    .user('viewer-token', VIEWER, [{ permission: 'get minecraftservers/files' }, { permission: 'get minecraftservers/holder' }, { permission: 'list minecraftservers/holder' }])
    .user('editor-token', EDITOR, [
      { permission: 'get minecraftservers/files', servers: ['survival'] },
      { permission: 'update minecraftservers/files', servers: ['survival'] },
    ])
    .user('operator-token', OPERATOR, [{ permission: 'delete minecraftservers/lock' }, { permission: 'update minecraftservers/state' }])
    .user('settler-token', SETTLER, [{ permission: 'post /felis-world/settle' }])
    .token('api-token', VIEWER, ['https://kubernetes.default.svc']);
}

const all: RouteModule = (deps) => (app) => {
  for (const m of Object.values(FUNCTIONS)) m(deps)(app);
};

function kit(rev = reviewer(), cfg = CFG) {
  const gates = new FakeGates();
  const ed = fakeEditor(gates, {
    list: () => ({ entries: [], truncated: false, free: 0 }),
    write: () => ({ sha256: 'x', size: 2 }),
  });
  const passes = { n: 0 };
  const k = routeKit(all, {
    gates,
    editor: ed.editor,
    lock: {
      unlock: async () => ({ removed: true, lock: { value: 'backup', kind: 'backup', fresh: false } }),
    } as never,
    auth: (logger) => kubernetesAuth(new KubeAuthorizer(rev, cfg), cfg, logger),
  });
  (k.deps as { settler: Settler }).settler = { settleOnce: async () => (passes.n++, []) } as unknown as Settler;
  const as = (token: string | undefined, method: string, path: string, body?: unknown) =>
    jsonCall((p, init) => k.app.request(p, init), token ?? '', method, path, body, token === undefined ? { authorization: '' } : {});
  return { ...k, as, rev, passes, editorCalls: ed.calls };
}

const write = { content: Buffer.from('hi').toString('base64'), content_sha256: '8f434346648f6b96df89dda901c5176b10a6d83961dd3c1ac88b59b2dc327aa4' };

test('a viewer lists and reads any server but is refused a write, with the permission named', async () => {
  const k = kit();
  const list = await k.as('viewer-token', 'GET', '/api/v1/servers/creative/files');
  assert.equal(list.status, 200, list.text);
  const w = await k.as('viewer-token', 'PUT', '/api/v1/servers/survival/file?path=a.txt', write);
  assert.equal(w.status, 403);
  const e = envelopeOf(w);
  assert.equal(e.code, 'forbidden');
  assert.match(e.message, /update minecraftservers\/files survival/);
  assert.doesNotMatch(w.text, /viewer-token/);
  assert.equal(k.editorCalls.filter((c) => c.method === 'write').length, 0, 'nothing was written');
});

test('an editor of survival writes there, and touches no other server', async () => {
  const k = kit();
  const ok = await k.as('editor-token', 'PUT', '/api/v1/servers/survival/file?path=a.txt', write);
  assert.equal(ok.status, 200, ok.text);
  for (const [m, p] of [
    ['GET', '/api/v1/servers/creative/files'],
    ['PUT', '/api/v1/servers/creative/file?path=a.txt'],
    ['DELETE', '/api/v1/servers/creative/lock'],
    ['GET', '/api/v1/holders'],
  ] as const) {
    const r = await k.as('editor-token', m, p, m === 'PUT' ? write : undefined);
    assert.equal(r.status, 403, `${m} ${p}: ${r.text}`);
  }
  const audits = k.audits();
  assert.equal(audits.length, 1);
  assert.equal(audits[0]!.actor, EDITOR);
  assert.equal(audits[0]!.actor_service_account, undefined);
});

test('an operator unlocks, and the audit event names the ServiceAccount both ways', async () => {
  const k = kit();
  const r = await k.as('operator-token', 'DELETE', '/api/v1/servers/survival/lock');
  assert.equal(r.status, 200, r.text);
  const [a] = k.audits();
  assert.equal(a!.action, 'maintenance.unlock');
  assert.equal(a!.actor, OPERATOR);
  assert.equal(a!.actor_service_account, 'ops/oncall');
  assert.equal((await k.as('viewer-token', 'DELETE', '/api/v1/servers/survival/lock')).status, 403);
});

test('no token, an unknown token and a token for another audience are 401 unauthorized', async () => {
  const k = kit();
  for (const t of [undefined, 'made-up', 'api-token']) {
    const r = await k.as(t, 'GET', '/api/v1/servers/survival/files');
    assert.equal(r.status, 401, String(t));
    assert.equal(envelopeOf(r).code, 'unauthorized');
  }
});

test('an apiserver that cannot answer gives 503 auth_unavailable, never 2xx or 401, and is asked again next time', async () => {
  const rev = reviewer();
  const k = kit(rev);
  rev.down = new Error('connect ECONNREFUSED 10.96.0.1:443');
  for (const t of ['viewer-token', 'made-up']) {
    const r = await k.as(t, 'GET', '/api/v1/servers/survival/files');
    assert.equal(r.status, 503);
    assert.equal(envelopeOf(r).code, 'auth_unavailable');
    assert.doesNotMatch(r.text, /ECONNREFUSED/);
  }
  rev.down = undefined;
  assert.equal((await k.as('viewer-token', 'GET', '/api/v1/servers/survival/files')).status, 200);
});

test('a warm decision asks the apiserver nothing', async () => {
  const rev = reviewer();
  const k = kit(rev);
  await k.as('viewer-token', 'GET', '/api/v1/servers/survival/files');
  const before = { ...rev.reviews };
  await k.as('viewer-token', 'GET', '/api/v1/servers/survival/files?path=world');
  assert.deepEqual(rev.reviews, before);
});

test("the request's log lines name its actor", async () => {
  const k = kit();
  await k.as('operator-token', 'DELETE', '/api/v1/servers/survival/lock');
  const lines = k.logs.map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.ok(lines.length > 0);
  assert.ok(
    lines.every((l) => l.actor === OPERATOR),
    JSON.stringify(lines),
  );
});

test('a route with no permission in the table is refused in kubernetes mode (fail closed)', async () => {
  const extra: RouteModule = (deps) => (app) => {
    all(deps)(app);
    app.get('/api/v1/servers/:name/secret-new-route', (c) => c.text('should not be reached'));
  };
  const rev = reviewer();
  const cfg = CFG;
  const k = routeKit(extra, { auth: (logger) => kubernetesAuth(new KubeAuthorizer(rev, cfg), cfg, logger) });
  const r = await jsonCall((p, init) => k.app.request(p, init), 'viewer-token', 'GET', '/api/v1/servers/survival/secret-new-route');
  assert.equal(r.status, 403);
  assert.match(envelopeOf(r).message, /no permission is defined for GET \/api\/v1\/servers\/:name\/secret-new-route/);
  // An unknown path is still 404, once the caller is known; an unknown caller learns nothing.
  assert.equal((await jsonCall((p, init) => k.app.request(p, init), 'viewer-token', 'GET', '/api/v1/nothing')).status, 404);
  assert.equal((await jsonCall((p, init) => k.app.request(p, init), 'made-up', 'GET', '/api/v1/nothing')).status, 401);
});

const ce = (type: string, data: unknown, authorization?: string) => ({
  method: 'POST',
  headers: {
    'content-type': 'application/json',
    'ce-specversion': '1.0',
    'ce-id': crypto.randomUUID(),
    'ce-source': '/felis/test',
    'ce-type': type,
    ...(authorization ? { authorization } : {}),
  },
  body: JSON.stringify(data),
});

test("an event routed to a route is authorized as that route, with the delivery's token", async () => {
  const k = kit();
  const ok = await k.app.request('/', ce('dev.felis.files.list', { server: 'creative', path: '' }, 'Bearer viewer-token'));
  assert.equal(ok.status, 200, await ok.text());
  const denied = await k.app.request('/', ce('dev.felis.lock.remove', { server: 'survival' }, 'Bearer viewer-token'));
  assert.equal(denied.status, 403);
  const none = await k.app.request('/', ce('dev.felis.files.list', { server: 'creative', path: '' }));
  assert.equal(none.status, 401);
});

test('a source event (a ping) needs the settle permission in kubernetes mode, and runs as its sender', async () => {
  const k = kit();
  assert.equal((await k.app.request('/', ce('dev.knative.sources.ping', {}))).status, 401);
  assert.equal((await k.app.request('/', ce('dev.knative.sources.ping', {}, 'Bearer viewer-token'))).status, 403);
  assert.equal(k.passes.n, 0);
  const ok = await k.app.request('/', ce('dev.knative.sources.ping', {}, 'Bearer settler-token'));
  assert.equal(ok.status, 200, await ok.text());
  assert.equal(k.passes.n, 1);
  assert.equal((await k.as('operator-token', 'POST', '/api/v1/restore-chains/settle')).status, 403);
  assert.equal((await k.as('settler-token', 'POST', '/api/v1/restore-chains/settle')).status, 200);
});

test("event deliveries are reviewed for the event audience (Knative OIDC's), callers for theirs", async () => {
  const rev = reviewer().user('oidc-token', SETTLER, [{ permission: 'post /felis-world/settle' }, { permission: 'get minecraftservers/files' }], ['serving.knative.dev/service/minecraft/settle']);
  const k = kit(rev, { ...CFG, eventAudience: 'serving.knative.dev/service/minecraft/settle' });
  assert.equal((await k.app.request('/', ce('dev.knative.sources.ping', {}, 'Bearer oidc-token'))).status, 200);
  assert.equal((await k.app.request('/', ce('dev.felis.files.list', { server: 'survival', path: '' }, 'Bearer oidc-token'))).status, 200);
  // The same token presented directly is for the wrong audience.
  assert.equal((await k.as('oidc-token', 'GET', '/api/v1/servers/survival/files')).status, 401);
});

test('token mode stays as it was: the shared token opens everything, and the actor is bearer', async () => {
  const k = routeKit(all, { lock: { unlock: async () => ({ removed: true, lock: { value: 'v', kind: 'backup', fresh: false } }) } as never });
  const r = await k.call('DELETE', '/api/v1/servers/survival/lock');
  assert.equal(r.status, 200, r.text);
  assert.equal(k.audits()[0]!.actor, 'bearer');
  assert.equal((await jsonCall((p, init) => k.app.request(p, init), 'wrong', 'GET', '/api/v1/servers/survival/holder')).status, 401);
});

test('a public route (its signed URL is the credential) is reached without a bearer token in both modes', async () => {
  const pub: RouteModule = () => (app) => {
    app.get('/api/v1/exports/:ticket/download', (c) => c.text('bytes'));
  };
  const rev = reviewer();
  const kube = routeKit(pub, { auth: (logger) => kubernetesAuth(new KubeAuthorizer(rev, CFG), CFG, logger) });
  const token = routeKit(pub);
  for (const k of [kube, token]) {
    const r = await k.app.request('/api/v1/exports/t1/download');
    assert.equal(r.status, 200);
    assert.equal(await r.text(), 'bytes');
  }
  assert.deepEqual(rev.reviews, { tokens: 0, access: 0 });
});
