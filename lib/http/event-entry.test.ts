import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { filesDelete } from '../../functions/files-delete/app.ts';
import { filesWrite } from '../../functions/files-write/app.ts';
import { worldLockRoutes } from '../../functions/world-lock/app.ts';
import { EventRejected } from '../events/parse.ts';
import { currentEvent, currentEventKey, eventKey } from '../events/scope.ts';
import { FileEditError } from '../files/errors.ts';
import { envelopeOf, FakeGates, fakeEditor, routeKit, TOKEN } from '../testing/route-kit.ts';
import { ApiError } from './envelope.ts';
import { routeEventFor } from './event-entry.ts';
import type { RouteModule } from './serve.ts';

const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const WRITE = { server: 'survival', path: 'ops.json', body: { content: Buffer.from('[]').toString('base64'), content_sha256: sha('[]') } };

function binary(type: string, data: unknown, id = 'ev-1', auth = true) {
  return {
    ...(auth ? { authorization: `Bearer ${TOKEN}` } : {}),
    'content-type': 'application/json',
    'ce-specversion': '1.0',
    'ce-id': id,
    'ce-source': '/tests/editor',
    'ce-type': type,
    body: JSON.stringify(data),
  };
}

async function post(kit: ReturnType<typeof routeKit>, h: Record<string, string>) {
  const { body, ...headers } = h;
  const res = await kit.app.request('/', { method: 'POST', headers, body });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, text, headers: res.headers };
}

function writeKit() {
  const gates = new FakeGates();
  const seen: Array<string | undefined> = [];
  const { editor, calls } = fakeEditor(gates, {
    write: () => {
      seen.push(currentEventKey());
      return sha('[]');
    },
  });
  return { kit: routeKit(filesWrite, { editor, gates }), calls, seen, gates };
}

test('a write event in binary mode is served by the write route, under the lock, with its event key in scope', async () => {
  const { kit, calls, seen } = writeKit();
  const r = await post(kit, binary('dev.felis.files.write', WRITE));
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body, { path: 'ops.json', status: 'written', sha256: sha('[]') });
  assert.equal(calls.length, 1);
  assert.equal(calls[0]!.locked, true);
  assert.equal(calls[0]!.args[1], 'ops.json');
  assert.deepEqual(seen, [eventKey('/tests/editor', 'ev-1')]);
  assert.equal(kit.audits().length, 1);
});

test('the same write in structured mode gets the same answer; plain HTTP runs with no event key', async () => {
  const { kit, seen } = writeKit();
  const doc = { specversion: '1.0', id: 'ev-1', source: '/tests/editor', type: 'dev.felis.files.write', datacontenttype: 'application/json', data: WRITE };
  const r = await post(kit, { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/cloudevents+json', body: JSON.stringify(doc) });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body, { path: 'ops.json', status: 'written', sha256: sha('[]') });
  const h = await kit.call('PUT', '/api/v1/servers/survival/file?path=ops.json', WRITE.body);
  assert.equal(h.status, 200, h.text);
  assert.deepEqual(seen, [eventKey('/tests/editor', 'ev-1'), undefined]);
});

test('an event without the bearer token is a 401, never retried, and nothing runs', async () => {
  const { kit, calls } = writeKit();
  const r = await post(kit, binary('dev.felis.files.write', WRITE, 'ev-2', false));
  assert.equal(r.status, 401);
  assert.equal(envelopeOf(r).code, 'unauthorized');
  assert.equal(calls.length, 0);
});

test('what does not exist is a 400 for an event (a Broker would retry a 404); busy stays 409 so it is retried', async () => {
  const { kit, gates, calls } = writeKit();
  gates.enterError = new ApiError(404, 'server_not_found' as never, 'no such server');
  const missing = await post(kit, binary('dev.felis.files.write', WRITE));
  assert.equal(missing.status, 400);
  assert.equal(envelopeOf(missing).code, 'server_not_found');
  const http = await kit.call('PUT', '/api/v1/servers/survival/file?path=ops.json', WRITE.body);
  assert.equal(http.status, 404);
  gates.enterError = new ApiError(409, 'server_running' as never, 'stop it first');
  const busy = await post(kit, binary('dev.felis.files.write', WRITE));
  assert.equal(busy.status, 409);
  assert.equal(envelopeOf(busy).code, 'server_running');
  assert.equal(calls.length, 0);
});

test('a create_only write that finds the file is 412 for an event, since a Broker would retry the 409 forever', async () => {
  const gates = new FakeGates();
  const { editor } = fakeEditor(gates, { write: () => Promise.reject(new FileEditError('exists', 'file already exists')) });
  const kit = routeKit(filesWrite, { editor, gates });
  const ev = await post(kit, binary('dev.felis.files.write', WRITE));
  assert.equal(ev.status, 412);
  assert.equal(envelopeOf(ev).code, 'file_exists');
  const http = await kit.call('PUT', '/api/v1/servers/survival/file?path=ops.json', WRITE.body);
  assert.equal(http.status, 409);
});

test('an unknown type, missing or extra data, and a body the route does not take are 400 with a precise code', async () => {
  const { kit, calls } = writeKit();
  const unknown = await post(kit, binary('dev.felis.files.explode', WRITE));
  assert.equal(unknown.status, 400);
  const u = envelopeOf(unknown);
  assert.equal(u.code, 'event_type_unknown');
  assert.match(u.message, /dev\.felis\.files\.write/);
  const noServer = await post(kit, binary('dev.felis.files.write', { ...WRITE, server: undefined }));
  assert.equal(envelopeOf(noServer).code, 'event_data_invalid');
  // A write's body is optional to its schema (the route names what is missing with its own code),
  // so an event without one reaches the route, which refuses it as it refuses the HTTP caller.
  const noBody = await post(kit, binary('dev.felis.files.write', { server: 'survival', path: 'a' }));
  assert.equal(noBody.status, 400);
  assert.deepEqual(envelopeOf(noBody), envelopeOf(await kit.call('PUT', '/api/v1/servers/survival/file?path=a')));
  const extra = await post(kit, binary('dev.felis.files.write', { ...WRITE, mode: 'fast' }));
  assert.equal(envelopeOf(extra).code, 'event_data_invalid');
  const badBody = await post(kit, binary('dev.felis.files.write', { ...WRITE, body: { content: 'not base64!' } }));
  assert.equal(badBody.status, 400);
  assert.equal(envelopeOf(badBody).code, 'bad_request');
  const notEvent = await kit.app.request('/', { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: '{}' });
  assert.equal(notEvent.status, 400);
  assert.equal(calls.length, 0);
});

test('functions served in one app share one event entry that takes all their types', async () => {
  const gates = new FakeGates();
  const { editor, calls } = fakeEditor(gates, { write: () => sha('[]') });
  const both: RouteModule = (deps) => (app) => {
    filesWrite(deps)(app);
    filesDelete(deps)(app);
  };
  const kit = routeKit(both, { editor, gates });
  const w = await post(kit, binary('dev.felis.files.write', WRITE, 'a'));
  const d = await post(kit, binary('dev.felis.files.delete', { server: 'survival', path: 'ops.json' }, 'b'));
  assert.equal(w.status, 200, w.text);
  assert.equal(d.status, 200, d.text);
  assert.deepEqual(d.body, { path: 'ops.json', status: 'deleted' });
  assert.deepEqual(
    calls.map((c) => c.method),
    ['write', 'delete'],
  );
  const withBody = await post(kit, binary('dev.felis.files.delete', { server: 'survival', path: 'x', body: {} }, 'c'));
  assert.equal(envelopeOf(withBody).code, 'event_data_invalid');
});

test('a lock-removal event passes force to the route as the query would', async () => {
  const asked: unknown[] = [];
  const kit = routeKit(worldLockRoutes, { lock: { unlock: async (name: string, o: { force: boolean }) => (asked.push([name, o.force]), { removed: false, lock: undefined }) } as never });
  const r = await post(kit, binary('dev.felis.lock.remove', { server: 'survival', force: true }));
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(asked, [['survival', true]]);
  const wrong = await post(kit, binary('dev.felis.lock.remove', { server: 'survival', path: 'a' }));
  assert.equal(envelopeOf(wrong).code, 'event_data_invalid');
});

test('an unauthenticated event is refused before its body is read, and a huge one leaves no big log line', async () => {
  const { kit, calls } = writeKit();
  const huge = 'x'.repeat(1_800_000);
  let pulled = 0;
  // A body that counts what is read of it: a refusal before reading pulls (almost) nothing.
  const body = new ReadableStream<Uint8Array>({
    pull(c) {
      if (pulled >= huge.length) return c.close();
      const chunk = Buffer.from(huge.slice(pulled, pulled + 65_536));
      pulled += chunk.length;
      c.enqueue(chunk);
    },
  });
  const res = await kit.app.request('/', {
    method: 'POST',
    headers: { 'content-type': 'application/cloudevents+json' },
    body,
    duplex: 'half',
  } as RequestInit);
  assert.equal(res.status, 401, await res.text());
  assert.ok(pulled <= 2 * 65_536, `${pulled} bytes of the body were read`);
  // Binary mode with a wrong token: refused the same way.
  const wrong = await post(kit, { ...binary('dev.felis.files.write', WRITE, huge), authorization: 'Bearer wrong' });
  assert.equal(wrong.status, 401);
  assert.equal(calls.length, 0);
  for (const l of kit.logs) assert.ok(l.length < 2048, `a log line of ${l.length} bytes`);
});

test("an authenticated event's logged attributes are cut to a few hundred bytes", async () => {
  const { kit } = writeKit();
  const id = 'i'.repeat(100_000);
  const r = await post(kit, binary('dev.felis.files.write', WRITE, id));
  assert.equal(r.status, 200, r.text);
  const unknown = await post(kit, binary('t'.repeat(100_000), WRITE, 'short'));
  assert.equal(envelopeOf(unknown).code, 'event_type_unknown');
  assert.ok(unknown.text.length < 2048, `an answer of ${unknown.text.length} bytes`);
  for (const l of kit.logs) assert.ok(l.length < 2048, `a log line of ${l.length} bytes`);
  assert.ok(kit.logs.some((l) => JSON.parse(l).msg === 'event received'));
});

test('the event in scope carries a digest of the request: the same id with another request has another digest', async () => {
  const seen: Array<ReturnType<typeof currentEvent>> = [];
  const gates = new FakeGates();
  const { editor } = fakeEditor(gates, { write: () => (seen.push(currentEvent()), sha('[]')) });
  const kit = routeKit(filesWrite, { editor, gates });
  await post(kit, binary('dev.felis.files.write', WRITE, 'same'));
  await post(kit, binary('dev.felis.files.write', WRITE, 'same'));
  await post(kit, binary('dev.felis.files.write', { ...WRITE, path: 'other.json' }, 'same'));
  assert.equal(seen.length, 3);
  assert.equal(seen[0]!.key, seen[2]!.key, 'one event key: source and id');
  assert.equal(seen[0]!.request, seen[1]!.request);
  assert.notEqual(seen[0]!.request, seen[2]!.request);
  assert.match(seen[0]!.request ?? '', /^[0-9a-f]{48}$/);
});

test("a table route's event is addressed by its path: a server route by server (and path/force where taken), a route without parameters by nothing", () => {
  const list = routeEventFor('GET', '/api/v1/servers/:name/files', { path: true }, false);
  assert.deepEqual([list.method, list.body, list.target({ server: 'survival', path: 'a b' })], ['GET', false, '/api/v1/servers/survival/files?path=a+b']);
  assert.throws(() => list.target({ server: 'survival', force: true }), EventRejected, 'force is not taken by a listing');
  const unlock = routeEventFor('DELETE', '/api/v1/servers/:name/lock', { force: true }, false);
  assert.equal(unlock.target({ server: 'survival', force: true }), '/api/v1/servers/survival/lock?force=true');
  assert.throws(() => unlock.target({ server: 'survival', path: 'x' }), EventRejected);
  const settle = routeEventFor('POST', '/api/v1/restore-chains/settle', {}, false);
  assert.equal(settle.target({}), '/api/v1/restore-chains/settle');
  assert.throws(() => settle.target({ server: 'survival' }), EventRejected);
  assert.equal(routeEventFor('PUT', '/api/v1/servers/:name/file', { path: true }, true).body, true);
  assert.throws(() => routeEventFor('GET', '/api/v1/servers/:name/files/uploads/:id', {}, false), /no event can address/);
});

test('an event carries the op query its route takes (as the HTTP query), and no other', () => {
  const search = routeEventFor('GET', '/api/v1/servers/:name/files/search', { path: true, query: ['q', 'limit'] }, false);
  assert.equal(search.target({ server: 'survival', path: 'world', q: '*.yml', limit: 5 }), '/api/v1/servers/survival/files/search?path=world&q=*.yml&limit=5');
  assert.equal(search.target({ server: 'survival', q: 'level' }), '/api/v1/servers/survival/files/search?q=level');
  assert.throws(() => search.target({ server: 'survival', q: 'level', after: 'x' }), /after is not used by this event type/);
  const list = routeEventFor('GET', '/api/v1/servers/:name/files', { path: true }, false);
  assert.throws(() => list.target({ server: 'survival', q: 'level' }), /q is not used by this event type/);
  const settle = routeEventFor('POST', '/api/v1/restore-chains/settle', {}, false);
  assert.throws(() => settle.target({ limit: 1 }), EventRejected);
});

test('an event fills the :id of a route that takes one (required, escaped), and no other route takes an id', () => {
  const restore = routeEventFor('POST', '/api/v1/servers/:name/files/trash/:id/restore', { id: true }, true);
  assert.equal(restore.target({ server: 'survival', id: '0190a1b2c3d4e5f6' }), '/api/v1/servers/survival/files/trash/0190a1b2c3d4e5f6/restore');
  assert.equal(restore.target({ server: 'survival', id: 'a/b?c' }), '/api/v1/servers/survival/files/trash/a%2Fb%3Fc/restore');
  assert.throws(() => restore.target({ server: 'survival' }), /id is required/);
  assert.throws(() => restore.target({ server: 'survival', id: '' }), /id is required/);
  assert.throws(() => restore.target({ server: 'survival', id: '0190a1b2c3d4e5f6', path: 'x' }), /path is not used/);
  const list = routeEventFor('GET', '/api/v1/servers/:name/files/trash', { query: ['limit', 'after'] }, false);
  assert.throws(() => list.target({ server: 'survival', id: '0190a1b2c3d4e5f6' }), /id is not used by this event type/);
  assert.throws(() => routeEventFor('POST', '/restore-chains/settle', {}, false).target({ id: 'x' }), EventRejected);
  // Only one `:id`, and only when the route says it takes it.
  assert.throws(() => routeEventFor('GET', '/api/v1/servers/:name/files/uploads/:id', {}, false), /no event can address/);
  assert.throws(() => routeEventFor('GET', '/api/v1/servers/:name/files/:op/x/:id', { id: true }, false), /no event can address/);
});
