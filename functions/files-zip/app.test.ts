import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MaintenanceBusyError } from '../../lib/maintenance/errors.ts';
import { startedView } from '../../lib/ops/view.ts';
import { backgroundKit } from '../../lib/testing/background-kit.ts';
import { envelopeOf } from '../../lib/testing/route-kit.ts';
import { filesZip } from './app.ts';

const kit = () => backgroundKit(filesZip, { start: (req) => startedView('00000000000000aa', 'zip', req.path, new Date('2026-12-01T06:00:00Z')) });

const URL = (p: string) => `/api/v1/servers/survival/files/zip?path=${encodeURIComponent(p)}`;

test('zip packs in the background under the world lock: 202 with the running op, audited', async () => {
  const k = kit();
  const r = await k.call('POST', URL('world'), {});
  assert.equal(r.status, 202, r.text);
  assert.deepEqual(r.body, { op: { id: '00000000000000aa', op: 'zip', path: 'world', state: 'running', started_at: '2026-12-01T06:00:00Z', done: 0, total: 0 } });
  assert.deepEqual(k.starts, [{ req: { op: 'zip', path: 'world' }, locked: true }]);
  assert.deepEqual(k.gates.ran, [{ server: 'survival', access: { op: 'zip', path: 'world' } }]);
  const [a] = k.audits();
  assert.equal(a!.action, 'file.zip');
  assert.deepEqual(a!.payload, { op: '00000000000000aa' });
});

test('a given name is passed as the archive name', async () => {
  const k = kit();
  const r = await k.call('POST', URL('plugins/Essentials'), { name: 'Essentials-backup.ZIP' });
  assert.equal(r.status, 202, r.text);
  assert.deepEqual(k.starts[0]!.req, { op: 'zip', path: 'plugins/Essentials', to: 'Essentials-backup.ZIP' });
});

test('the name must be one new .zip file name by the name rule (bad_name); the body is strict; each refusal comes before the lock', async () => {
  const cases: Array<[unknown, string, RegExp]> = [
    [{ name: 'a/b.zip' }, 'bad_name', /without a slash/],
    [{ name: '../b.zip' }, 'bad_name', /without a slash/],
    [{ name: 'b.tar' }, 'bad_name', /must end in \.zip/],
    [{ name: '.zip' }, 'bad_name', /must end in \.zip/],
    [{ name: '' }, 'bad_name', /is empty/],
    [{ name: 'a\u0000.zip' }, 'bad_name', /NUL/],
    [{ name: `${'x'.repeat(252)}.zip` }, 'bad_name', /longer than 255 bytes/],
    [{ name: 'line\nbreak.zip' }, 'bad_name', /control character \(U\+000A\)/],
    [{ name: 'evil\u202epiz.zip' }, 'bad_name', /bidirectional control character \(U\+202E\)/],
    [{ name: 7 }, 'bad_request', /name/],
    [{ to: 'x.zip' }, 'bad_request', /to|unrecognized/i],
  ];
  for (const [body, code, msg] of cases) {
    const k = kit();
    const r = await k.call('POST', URL('world'), body);
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.equal(envelopeOf(r).code, code, JSON.stringify(body));
    assert.match(envelopeOf(r).message, msg, JSON.stringify(body));
    assert.equal(k.gates.ran.length, 0);
    assert.equal(k.starts.length, 0);
  }
  assert.equal((await kit().call('POST', URL('world'), { name: `${'x'.repeat(251)}.zip` })).status, 202, 'a 255-byte name is fine');
  assert.equal((await kit().call('POST', URL('world'))).status, 202, 'every body field is optional: the body may be left out');
});

test('zip needs a path and a free world', async () => {
  const k = kit();
  const r = await k.call('POST', '/api/v1/servers/survival/files/zip', {});
  assert.equal(r.status, 400);
  assert.equal(envelopeOf(r).code, 'bad_request');
  const busy = kit();
  busy.gates.runError = new MaintenanceBusyError('file-write');
  const b = await busy.call('POST', URL('world'), {});
  assert.equal(b.status, 409);
  assert.equal(envelopeOf(b).code, 'maintenance_in_progress');
  assert.equal(busy.starts.length, 0);
  assert.equal(busy.audits().length, 0);
});
