import { test } from 'node:test';
import assert from 'node:assert/strict';
import { envelopeOf, FakeGates, fakeEditor, routeKit } from '../../lib/testing/route-kit.ts';
import { NotStoppedError } from '../../lib/maintenance/errors.ts';
import { filesList } from './app.ts';

function kit(free: number) {
  const gates = new FakeGates();
  const entries = [{ name: 'world', size: 0, is_dir: true, mod_time: '2026-11-29T10:00:00Z' }];
  const ed = fakeEditor(gates, { list: () => ({ entries, truncated: false, free }) });
  return { ...routeKit(filesList, { gates, editor: ed.editor }), calls: ed.calls };
}

test('a listing of the root needs no path, takes no lock, and reports free bytes (null when unknown)', async () => {
  const k = kit(1234);
  const r = await k.call('GET', '/api/v1/servers/survival/files');
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body, { path: '', entries: [{ name: 'world', size: 0, is_dir: true, mod_time: '2026-11-29T10:00:00Z' }], truncated: false, free_bytes: 1234 });
  assert.deepEqual(k.gates.entered, [{ server: 'survival', access: { op: 'list', path: '' } }]);
  assert.equal(k.gates.ran.length, 0);
  assert.equal((await kit(-1).call('GET', '/api/v1/servers/survival/files?path=world')).body.free_bytes, null);
  assert.equal((await kit(0).call('GET', '/api/v1/servers/survival/files?path=world')).body.free_bytes, 0);
});

test('a running server is 409 not_stopped; a bad name 400 bad_name; no Job either way', async () => {
  const k = kit(0);
  k.gates.enterError = new NotStoppedError();
  const r = await k.call('GET', '/api/v1/servers/survival/files');
  assert.equal(r.status, 409);
  assert.equal(envelopeOf(r).code, 'not_stopped');
  const b = await k.call('GET', '/api/v1/servers/-bad-/files');
  assert.equal(b.status, 400);
  assert.equal(envelopeOf(b).code, 'bad_name');
  assert.equal(k.calls.length, 0);
});

test('with a browse session the listing comes from it (no Job); without an answer from it, from the one-shot Job', async () => {
  const k = kit(1234);
  const asked: Array<{ op: string; path: string; server: string }> = [];
  let answer: string | undefined = JSON.stringify({ entries: [{ name: 'plugins', size: 0, is_dir: true, mod_time: '2026-11-30T10:00:00Z' }], avail: 99 });
  k.deps.browse = {
    run: async (t, op, path) => {
      asked.push({ op, path, server: t.server });
      return answer;
    },
  };
  const r = await k.call('GET', '/api/v1/servers/survival/files?path=world');
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body, { path: 'world', entries: [{ name: 'plugins', size: 0, is_dir: true, mod_time: '2026-11-30T10:00:00Z' }], truncated: false, free_bytes: 99 });
  assert.deepEqual(asked, [{ op: 'list', path: 'world', server: 'survival' }]);
  assert.equal(k.calls.length, 0, 'no one-shot Job');
  answer = JSON.stringify({ code: 'not_found', error: 'nope does not exist' });
  const missing = await k.call('GET', '/api/v1/servers/survival/files?path=nope');
  assert.equal(missing.status, 404);
  assert.equal(envelopeOf(missing).code, 'not_found');
  answer = undefined;
  const fallback = await k.call('GET', '/api/v1/servers/survival/files?path=world');
  assert.equal(fallback.body.free_bytes, 1234);
  assert.equal(k.calls.length, 1, 'the one-shot Job answered');
  k.gates.enterError = new NotStoppedError();
  assert.equal((await k.call('GET', '/api/v1/servers/survival/files')).status, 409);
  assert.equal(asked.length, 3, 'a refused request never reaches the session');
});
