import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NotStoppedError } from '../../lib/maintenance/errors.ts';
import type { Result } from '../../lib/protocol/result.ts';
import { envelopeOf, FakeGates, fakeEditor, RUNNING_SERVER, realGates, routeKit } from '../../lib/testing/route-kit.ts';
import { filesTail } from './app.ts';

const report = { path: 'logs/latest.log', lines: ['[12:00:00] Done', '[12:00:01] Saved'], truncated: false, size: 32 };

function kit(answer: Result = { report }) {
  const gates = new FakeGates();
  const ed = fakeEditor(gates, { run: () => answer });
  return { ...routeKit(filesTail, { gates, editor: ed.editor }), calls: ed.calls };
}

test('a tail takes no lock, runs the tail op with lines unset by default, answers the report, and is not audited', async () => {
  const k = kit();
  const r = await k.call('GET', '/api/v1/servers/survival/files/tail?path=logs%2Flatest.log');
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body, { ...report, world_state: 'stopped' });
  assert.deepEqual(k.gates.entered, [{ server: 'survival', access: { op: 'tail', path: 'logs/latest.log' } }]);
  assert.equal(k.gates.ran.length, 0, 'no lock');
  assert.deepEqual(k.calls[0]!.args.slice(1, 4), ['tail', 'logs/latest.log', {}]);
  assert.equal(k.audits().length, 0);
});

test('lines reaches the Job as a number; out of 1..5000 it is 400 before any Job; a path is required', async () => {
  const k = kit();
  assert.equal((await k.call('GET', '/api/v1/servers/survival/files/tail?path=a.log&lines=5000')).status, 200);
  assert.deepEqual(k.calls[0]!.args[3], { lines: 5000 });
  for (const bad of ['lines=0', 'lines=5001', 'lines=1.5', 'lines=-1', 'lines=ten', 'lines=']) {
    const b = await k.call('GET', `/api/v1/servers/survival/files/tail?path=a.log&${bad}`);
    assert.equal(b.status, 400, `${bad}: ${b.text}`);
    assert.match(envelopeOf(b).message, /\?lines= query parameter must be a whole number from 1 to 5000/);
  }
  const none = await k.call('GET', '/api/v1/servers/survival/files/tail');
  assert.equal(none.status, 400);
  assert.equal(k.calls.length, 1);
});

test("a running server's log is tailed, world_state running; refusals are their envelopes", async () => {
  const k = kit();
  k.deps.gates = realGates(RUNNING_SERVER).gates;
  const r = await k.call('GET', '/api/v1/servers/survival/files/tail?path=logs%2Flatest.log');
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.world_state, 'running');
  const missing = kit({ code: 'not_found', error: 'nope.log does not exist' });
  assert.equal(envelopeOf(await missing.call('GET', '/api/v1/servers/survival/files/tail?path=nope.log')).code, 'not_found');
  const hidden = kit({ code: 'bad_path', error: 'config/paper-global.yml is not readable' });
  assert.equal((await hidden.call('GET', '/api/v1/servers/survival/files/tail?path=config%2Fpaper-global.yml')).status, 400);
  const broken = kit({ report: { ...report, lines: [1] } });
  assert.equal((await broken.call('GET', '/api/v1/servers/survival/files/tail?path=a.log')).status, 500, 'a report of another shape is ours');
  const off = kit();
  off.gates.enterError = new NotStoppedError();
  assert.equal((await off.call('GET', '/api/v1/servers/survival/files/tail?path=a.log')).status, 409);
});
