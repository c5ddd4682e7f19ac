import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NotStoppedError, ServerNotFoundError } from '../maintenance/errors.ts';
import type { Op } from '../protocol/ops.ts';
import { envelopeOf, FakeGates, fakeEditor, routeKit } from '../testing/route-kit.ts';
import { sendJson } from './envelope.ts';
import { openFileCall, underWorldLock } from './file-call.ts';
import type { RouteModule } from './serve.ts';

/** A bare file route: opens the call for `op`, runs a mutation under the lock, echoes what it saw. */
const probe =
  (op: Op): RouteModule =>
  (deps) =>
  (app) => {
    app.all('/api/v1/servers/:name/probe', async (c) => {
      const f = await openFileCall(c, deps, op);
      const locked = op === 'list' || op === 'read' ? false : await underWorldLock(deps, f, async () => deps.gates instanceof FakeGates && deps.gates.holding);
      return sendJson(c, 200, { path: f.path, target: f.target, locked });
    });
  };

function kit(op: Op) {
  const gates = new FakeGates();
  return routeKit(probe(op), { gates, editor: fakeEditor(gates).editor });
}

test('the path is read once and handed to the gates as the op and path, nothing about HTTP', async () => {
  const k = kit('write');
  const r = await k.call('PUT', '/api/v1/servers/survival/probe?path=world%2Flevel.dat');
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body, { path: 'world/level.dat', target: { server: 'survival', world: { claim: 'world-survival-0' } }, locked: true });
  assert.deepEqual(k.gates.entered, [{ server: 'survival', access: { op: 'write', path: 'world/level.dat' } }]);
  assert.deepEqual(k.gates.ran, [{ server: 'survival', access: { op: 'write', path: 'world/level.dat' } }]);
});

test('the order: name, then path shape, then the gates, then the editor, then a required path', async () => {
  const order = async (op: Op, url: string, setup: (k: ReturnType<typeof kit>) => void = () => {}) => {
    const k = kit(op);
    setup(k);
    const r = await k.call('GET', url);
    return { code: r.status === 200 ? 'ok' : envelopeOf(r).code, entered: k.gates.entered.length };
  };
  assert.deepEqual(await order('read', '/api/v1/servers/BAD/probe?path=%00'), { code: 'bad_name', entered: 0 });
  assert.deepEqual(await order('read', '/api/v1/servers/survival/probe?path=a%00'), { code: 'bad_path', entered: 0 });
  assert.deepEqual(await order('read', '/api/v1/servers/survival/probe', (k) => (k.gates.enterError = new ServerNotFoundError('survival'))), { code: 'not_found', entered: 1 });
  assert.deepEqual(await order('read', '/api/v1/servers/survival/probe'), { code: 'bad_request', entered: 1 });
  assert.deepEqual(await order('list', '/api/v1/servers/survival/probe'), { code: 'ok', entered: 1 });
  const noEditor = routeKit(probe('read'), { editor: null });
  const r = await noEditor.call('GET', '/api/v1/servers/survival/probe');
  assert.equal(envelopeOf(r).code, 'files_unavailable', 'a missing editor is told before a missing path');
});

test('path limits: 255 bytes per name and 4096 in all pass; one byte more is 400 bad_path', async () => {
  const ok = ['a'.repeat(255), `${'d'.repeat(200)}/`.repeat(20) + 'x'.repeat(76)];
  for (const p of ok) assert.equal((await kit('read').call('GET', `/api/v1/servers/survival/probe?path=${p}`)).status, 200, `${p.length}`);
  const bad = ['a'.repeat(256), `${'d'.repeat(200)}/`.repeat(20) + 'x'.repeat(77), 'é'.repeat(128)];
  for (const p of bad) {
    const r = await kit('read').call('GET', `/api/v1/servers/survival/probe?path=${encodeURIComponent(p)}`);
    assert.equal(r.status, 400, `${p.length}`);
    assert.equal(envelopeOf(r).code, 'bad_path');
  }
});

test('a gate that finds the server not stopped ends the edit session the editor knows of; other refusals do not', async () => {
  const gates = new FakeGates();
  const fe = fakeEditor(gates);
  const k = routeKit(probe('write'), { gates, editor: fe.editor });
  gates.enterError = new NotStoppedError();
  const r = await k.call('PUT', '/api/v1/servers/survival/probe?path=a.txt');
  assert.equal(r.status, 409);
  assert.equal(envelopeOf(r).code, 'not_stopped');
  assert.deepEqual(fe.ended, ['survival']);
  gates.enterError = new ServerNotFoundError('survival');
  assert.equal((await k.call('PUT', '/api/v1/servers/survival/probe?path=a.txt')).status, 404);
  assert.deepEqual(fe.ended, ['survival']);
});
