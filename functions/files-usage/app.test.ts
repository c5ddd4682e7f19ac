import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NotStoppedError } from '../../lib/maintenance/errors.ts';
import type { Result } from '../../lib/protocol/result.ts';
import { envelopeOf, FakeGates, fakeEditor, RUNNING_SERVER, realGates, routeKit } from '../../lib/testing/route-kit.ts';
import { filesUsage } from './app.ts';

const report = {
  path: '',
  bytes: 8192,
  apparent_bytes: 5000,
  files: 2,
  dirs: 1,
  children: [{ name: 'world', bytes: 8192, apparent_bytes: 5000, files: 2, is_dir: true }],
  largest: [{ path: 'world/level.dat', bytes: 4096, apparent_bytes: 4000 }],
  trash_bytes: 0,
  capacity: 1 << 30,
  free: -1,
  scanned_at: '2026-12-07T12:00:00.000Z',
  truncated: false,
};

function kit(answer: Result = { report }) {
  const gates = new FakeGates();
  const ed = fakeEditor(gates, { run: () => answer });
  return { ...routeKit(filesUsage, { gates, editor: ed.editor }), calls: ed.calls };
}

test('usage of the root needs no path, takes no lock, runs the usage op with the defaults unset, and answers the report', async () => {
  const k = kit();
  const r = await k.call('GET', '/api/v1/servers/survival/files/usage');
  assert.equal(r.status, 200, r.text);
  const { capacity: _c, free: _f, ...walked } = report;
  assert.deepEqual(r.body, { ...walked, capacity_bytes: 1 << 30, free_bytes: null, world_state: 'stopped' });
  assert.deepEqual(k.gates.entered, [{ server: 'survival', access: { op: 'usage', path: '' } }]);
  assert.equal(k.gates.ran.length, 0, 'no lock');
  assert.deepEqual(k.calls[0]!.args.slice(1, 4), ['usage', '', { depth: undefined, top: undefined }]);
});

test('depth and top reach the Job as numbers; out of bounds they are 400 before any Job', async () => {
  const k = kit();
  const r = await k.call('GET', '/api/v1/servers/survival/files/usage?path=world&depth=3&top=100');
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(k.calls[0]!.args.slice(1, 4), ['usage', 'world', { depth: 3, top: 100 }]);
  for (const bad of ['depth=0', 'depth=4', 'depth=1.5', 'top=0', 'top=101', 'top=ten']) {
    const b = await k.call('GET', `/api/v1/servers/survival/files/usage?${bad}`);
    assert.equal(b.status, 400, `${bad}: ${b.text}`);
    assert.match(envelopeOf(b).message, /\?(depth|top)= query parameter must be a whole number/);
  }
  assert.equal(k.calls.length, 1);
});

test("a running server's usage is answered, world_state running; a refusal is its envelope", async () => {
  const k = kit();
  k.deps.gates = realGates(RUNNING_SERVER).gates;
  const r = await k.call('GET', '/api/v1/servers/survival/files/usage');
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.world_state, 'running');
  const missing = kit({ code: 'not_found', error: 'no such file or folder' });
  const m = await missing.call('GET', '/api/v1/servers/survival/files/usage?path=nope');
  assert.equal(m.status, 404);
  assert.equal(envelopeOf(m).code, 'not_found');
  const off = kit();
  off.gates.enterError = new NotStoppedError();
  assert.equal((await off.call('GET', '/api/v1/servers/survival/files/usage')).status, 409);
});

test('a browse Pod already serving answers (no Job), asked with start: false and the shape as its query; without one, or cut short there, the one-shot Job', async () => {
  const k = kit();
  const asked: unknown[] = [];
  let answer: string | undefined = JSON.stringify({ report: { ...report, files: 7 } });
  k.deps.browse = {
    run: async (t, op, path, _signal, _early, query, o) => {
      asked.push({ op, path, server: t.server, query, o });
      return answer;
    },
  };
  const r = await k.call('GET', '/api/v1/servers/survival/files/usage?path=world&depth=2&top=5');
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.files, 7);
  assert.equal(r.body.world_state, 'stopped');
  assert.deepEqual(asked, [{ op: 'usage', path: 'world', server: 'survival', query: { depth: 2, top: 5 }, o: { start: false } }]);
  assert.equal(k.calls.length, 0, 'no one-shot Job');
  // The defaults are not sent: the Pod's op has the same.
  await k.call('GET', '/api/v1/servers/survival/files/usage');
  assert.deepEqual((asked[1] as { query: unknown }).query, {});
  // The Pod's shorter walk ran out: its answer is not used, the Job walks.
  answer = JSON.stringify({ report: { ...report, files: 7, truncated: true } });
  const cut = await k.call('GET', '/api/v1/servers/survival/files/usage?path=world');
  assert.equal(cut.status, 200, cut.text);
  assert.deepEqual([cut.body.files, cut.body.truncated], [2, false]);
  assert.equal(k.calls.length, 1, 'the one-shot Job answered');
  answer = undefined;
  assert.equal((await k.call('GET', '/api/v1/servers/survival/files/usage')).body.files, 2);
  assert.equal(k.calls.length, 2);
  answer = JSON.stringify({ code: 'not_found', error: 'nope does not exist' });
  assert.equal((await k.call('GET', '/api/v1/servers/survival/files/usage?path=nope')).status, 404);
  assert.equal(k.calls.length, 2);
});
