import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FileEditError } from '../../lib/files/errors.ts';
import { MaintenanceBusyError } from '../../lib/maintenance/errors.ts';
import { envelopeOf, FakeGates, fakeEditor, routeKit, TOKEN } from '../../lib/testing/route-kit.ts';
import { filesMkdir } from './app.ts';

function kit(answer?: () => unknown) {
  const gates = new FakeGates();
  const ed = fakeEditor(gates, answer ? { mkdir: answer } : {});
  return { ...routeKit(filesMkdir, { gates, editor: ed.editor }), calls: ed.calls };
}

test('mkdir runs under the world lock, answers created, and is audited as server:path', async () => {
  const k = kit();
  const r = await k.call('POST', '/api/v1/servers/survival/files/mkdir?path=plugins%2Fold');
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body, { path: 'plugins/old', status: 'created' });
  assert.deepEqual(k.gates.ran, [{ server: 'survival', access: { op: 'mkdir', path: 'plugins/old' } }]);
  assert.equal(k.calls.length, 1);
  assert.equal(k.calls[0]!.locked, true);
  const [a] = k.audits();
  assert.equal(a!.action, 'file.mkdir');
  assert.equal(a!.target, 'survival:plugins/old');
});

test('mkdir while the world is held: 409, no Job, not audited', async () => {
  const k = kit();
  k.gates.runError = new MaintenanceBusyError('restore');
  const r = await k.call('POST', '/api/v1/servers/survival/files/mkdir?path=a');
  assert.equal(r.status, 409);
  assert.equal(envelopeOf(r).code, 'maintenance_in_progress');
  assert.equal(k.calls.length, 0);
  assert.equal(k.audits().length, 0);
});

test('mkdir needs a path, and refuses a bad path (the name rule: it creates it) or server name before the lock', async () => {
  for (const [q, code] of [
    ['', 'bad_request'],
    ['?path=', 'bad_request'],
    ['?path=a%00', 'bad_path'],
    [`?path=a/${'x'.repeat(256)}`, 'bad_path'],
    ['?path=new%07', 'bad_path'],
    ['?path=a/%E2%80%AEb', 'bad_path'],
  ] as const) {
    const k = kit();
    const r = await k.call('POST', `/api/v1/servers/survival/files/mkdir${q}`);
    assert.equal(r.status, 400, q);
    assert.equal(envelopeOf(r).code, code, q);
    assert.equal(k.gates.ran.length, 0);
  }
  const badName = await kit().call('POST', '/api/v1/servers/Survival/files/mkdir?path=a');
  assert.equal(badName.status, 400);
  assert.equal(envelopeOf(badName).code, 'bad_name');
});

test("mkdir: the Job's refusal maps to its code and is not audited", async () => {
  const k = kit(() => {
    throw new FileEditError('exists');
  });
  const r = await k.call('POST', '/api/v1/servers/survival/files/mkdir?path=a');
  assert.equal(r.status, 409);
  assert.equal(envelopeOf(r).code, 'file_exists');
  assert.equal(k.audits().length, 0);
});

test('mkdir ?parents=true asks the Job for the missing folders too and is audited with parents; only the exact value true counts', async () => {
  const k = kit();
  const r = await k.call('POST', '/api/v1/servers/survival/files/mkdir?path=a%2Fb%2Fc&parents=true');
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body, { path: 'a/b/c', status: 'created' });
  assert.deepEqual(k.calls[0]!.args[3], { parents: true });
  assert.equal(k.calls[0]!.locked, true);
  assert.deepEqual(k.audits()[0]!.payload, { parents: true });
  for (const v of ['1', 'TRUE', 'yes', '']) {
    const other = kit();
    assert.equal((await other.call('POST', `/api/v1/servers/survival/files/mkdir?path=a&parents=${v}`)).status, 200, v);
    assert.deepEqual(other.calls[0]!.args[3], { parents: false }, v);
    assert.equal(other.audits()[0]!.payload, undefined, v);
  }
});

test('mkdir without parents: a missing parent folder is 404 in words naming that folder', async () => {
  const k = kit(() => {
    throw new FileEditError('not_found', 'folder a/b does not exist');
  });
  const r = await k.call('POST', '/api/v1/servers/survival/files/mkdir?path=a%2Fb%2Fc');
  assert.equal(r.status, 404);
  assert.equal(envelopeOf(r).code, 'not_found');
  assert.match(envelopeOf(r).message, /folder a\/b does not exist/);
  assert.deepEqual(k.calls[0]!.args[3], { parents: false });
});

test('the CloudEvent dev.felis.files.mkdir carries parents as the query does', async () => {
  const k = kit();
  const deliver = async (data: unknown) =>
    k.app.request('/', {
      method: 'POST',
      headers: {
        authorization: `Bearer ${TOKEN}`,
        'content-type': 'application/json',
        'ce-specversion': '1.0',
        'ce-id': `ev-${Math.random()}`,
        'ce-source': '/tests/mkdir',
        'ce-type': 'dev.felis.files.mkdir',
      },
      body: JSON.stringify(data),
    });
  const r = await deliver({ server: 'survival', path: 'a/b', parents: true });
  assert.equal(r.status, 200, await r.text());
  assert.deepEqual(k.calls.at(-1)!.args.slice(1, 2), ['a/b']);
  assert.deepEqual(k.calls.at(-1)!.args[3], { parents: true });
  assert.equal((await deliver({ server: 'survival', path: 'a/c' })).status, 200);
  assert.deepEqual(k.calls.at(-1)!.args[3], { parents: false });
});
