import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FileEditError } from '../../lib/files/errors.ts';
import { MaintenanceBusyError } from '../../lib/maintenance/errors.ts';
import { envelopeOf, FakeGates, fakeEditor, routeKit } from '../../lib/testing/route-kit.ts';
import { filesRename } from './app.ts';

function kit(rename?: () => unknown) {
  const gates = new FakeGates();
  const ed = fakeEditor(gates, rename ? { rename } : {});
  return { ...routeKit(filesRename, { gates, editor: ed.editor }), calls: ed.calls };
}
const URL_ = '/api/v1/servers/survival/files/rename?path=a.txt';

test('a rename runs under the world lock and is audited with its destination', async () => {
  const k = kit();
  const r = await k.call('POST', URL_, { to: 'b/c.txt' });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body, { path: 'a.txt', to: 'b/c.txt', status: 'renamed' });
  assert.deepEqual(k.gates.ran, [{ server: 'survival', access: { op: 'rename', path: 'a.txt' } }]);
  assert.deepEqual(k.calls[0]!.args.slice(1, 3), ['a.txt', 'b/c.txt']);
  assert.equal(k.calls[0]!.locked, true);
  const [a] = k.audits();
  assert.equal(a!.action, 'file.rename');
  assert.equal(a!.target, 'survival:a.txt');
  assert.deepEqual(a!.payload, { to: 'b/c.txt' });
});

test('the destination is required and checked like a path; unknown fields and big bodies are refused; no lock', async () => {
  for (const [b, status, code] of [
    [{}, 400, 'bad_request'],
    [{ to: '' }, 400, 'bad_request'],
    [{ to: 'x\u0000y' }, 400, 'bad_path'],
    [{ to: 'y'.repeat(256) }, 400, 'bad_path'],
    [{ to: 'cfg/line\nbreak.yml' }, 400, 'bad_path'],
    [{ to: 'evil\u2067.txt' }, 400, 'bad_path'],
    [{ to: 'b', overwrite: true }, 400, 'bad_request'],
    [{ to: 5 }, 400, 'bad_request'],
    [JSON.stringify({ to: 'z'.repeat((1 << 20) + 1) }), 413, 'too_large'],
  ] as const) {
    const k = kit();
    const r = await k.call('POST', URL_, b);
    assert.equal(r.status, status, JSON.stringify(b).slice(0, 50));
    assert.equal(envelopeOf(r).code, code);
    assert.equal(k.gates.ran.length, 0);
    assert.equal(k.calls.length, 0);
  }
});

test('held: 409 and no Job; an existing destination: 409 file_exists, not audited', async () => {
  const k = kit();
  k.gates.runError = new MaintenanceBusyError('file-write');
  const r = await k.call('POST', URL_, { to: 'b' });
  assert.equal(r.status, 409);
  assert.equal(envelopeOf(r).message, "a file write is running on this server's world; retry once it finishes");
  assert.equal(k.calls.length, 0);
  const e = kit(() => {
    throw new FileEditError('exists', 'b');
  });
  const x = await e.call('POST', URL_, { to: 'b' });
  assert.equal(x.status, 409);
  assert.equal(envelopeOf(x).code, 'file_exists');
  assert.equal(e.audits().length, 0);
});
