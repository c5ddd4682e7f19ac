import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FileEditError } from '../../lib/files/errors.ts';
import { MaintenanceBusyError } from '../../lib/maintenance/errors.ts';
import { envelopeOf, FakeGates, fakeEditor, routeKit } from '../../lib/testing/route-kit.ts';
import { filesDelete } from './app.ts';

function kit(answer?: () => unknown) {
  const gates = new FakeGates();
  const ed = fakeEditor(gates, answer ? { delete: answer } : {});
  return { ...routeKit(filesDelete, { gates, editor: ed.editor }), calls: ed.calls };
}

test('delete runs under the world lock, answers deleted, and is audited as server:path', async () => {
  const k = kit();
  const r = await k.call('DELETE', '/api/v1/servers/survival/file?path=plugins%2Fold');
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body, { path: 'plugins/old', status: 'deleted' });
  assert.deepEqual(k.gates.ran, [{ server: 'survival', access: { op: 'delete', path: 'plugins/old' } }]);
  assert.equal(k.calls.length, 1);
  assert.equal(k.calls[0]!.locked, true);
  const [a] = k.audits();
  assert.equal(a!.action, 'file.delete');
  assert.equal(a!.target, 'survival:plugins/old');
});

test('delete while the world is held: 409, no Job, not audited', async () => {
  const k = kit();
  k.gates.runError = new MaintenanceBusyError('restore');
  const r = await k.call('DELETE', '/api/v1/servers/survival/file?path=a');
  assert.equal(r.status, 409);
  assert.equal(envelopeOf(r).code, 'maintenance_in_progress');
  assert.equal(k.calls.length, 0);
  assert.equal(k.audits().length, 0);
});

test('delete needs a path, and refuses a bad path or server name before the lock', async () => {
  for (const [q, code] of [
    ['', 'bad_request'],
    ['?path=', 'bad_request'],
    ['?path=a%00', 'bad_path'],
    [`?path=a/${'x'.repeat(256)}`, 'bad_path'],
  ] as const) {
    const k = kit();
    const r = await k.call('DELETE', `/api/v1/servers/survival/file${q}`);
    assert.equal(r.status, 400, q);
    assert.equal(envelopeOf(r).code, code, q);
    assert.equal(k.gates.ran.length, 0);
  }
  const badName = await kit().call('DELETE', '/api/v1/servers/Survival/file?path=a');
  assert.equal(badName.status, 400);
  assert.equal(envelopeOf(badName).code, 'bad_name');
});

test("delete: the Job's refusal maps to its code and is not audited", async () => {
  const k = kit(() => {
    throw new FileEditError('not_found');
  });
  const r = await k.call('DELETE', '/api/v1/servers/survival/file?path=a');
  assert.equal(r.status, 404);
  assert.equal(envelopeOf(r).code, 'not_found');
  assert.equal(k.audits().length, 0);
});

test("delete answers the undo trash's record as trash_id when the Job made one, and nothing more when not", async () => {
  const k = kit(() => ({ trashId: '0190a1b2c3d4e5f6' }));
  const r = await k.call('DELETE', '/api/v1/servers/survival/file?path=plugins%2Fold');
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body, { path: 'plugins/old', status: 'deleted', trash_id: '0190a1b2c3d4e5f6' });
  assert.deepEqual(k.audits()[0]!.payload, { trash_id: '0190a1b2c3d4e5f6' });
  const off = await kit(() => ({})).call('DELETE', '/api/v1/servers/survival/file?path=a');
  assert.deepEqual(off.body, { path: 'a', status: 'deleted' });
});
