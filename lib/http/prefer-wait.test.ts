/**
 * `Prefer: wait=N` on the file mutations, through the real app shell with app.request(): the
 * header reaches the lock as a bounded wait, `Preference-Applied` says when it was honoured, and
 * without it nothing changes. The last tests run the real MaintenanceGates and WorldLock over a
 * fake API server, so the wait meets a real annotation lock.
 */

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { filesMkdir } from '../../functions/files-mkdir/app.ts';
import { filesWrite } from '../../functions/files-write/app.ts';
import type { FileAccess, RunOptions } from '../files/gates.ts';
import { MaintenanceGates } from '../maintenance/file-gates.ts';
import { lockValue } from '../maintenance/holder.ts';
import { WorldLock } from '../maintenance/world-lock.ts';
import { FakeServerApi } from '../testing/fake-servers.ts';
import { felisServer } from '../testing/felis-fixtures.ts';
import { envelopeOf, FakeGates, fakeEditor, routeKit } from '../testing/route-kit.ts';

const LOCK = 'felis.lolicon.best/maintenance';
const URL_ = '/api/v1/servers/survival/file?path=a.txt';
const body = () => {
  const b = Buffer.from('hello');
  return { content: b.toString('base64'), content_sha256: createHash('sha256').update(b).digest('hex') };
};

function fakeKit() {
  const gates = new FakeGates();
  return routeKit(filesWrite, { gates, editor: fakeEditor(gates, { write: () => 'a'.repeat(64) }).editor });
}

test('Prefer: wait=10 reaches the lock as a 10 s wait tied to the request, and is answered Preference-Applied: wait=10', async () => {
  const k = fakeKit();
  const r = await k.call('PUT', URL_, body(), { prefer: 'wait=10' });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.headers.get('preference-applied'), 'wait=10');
  assert.equal(k.gates.runOptions.length, 1);
  assert.equal(k.gates.runOptions[0]!.waitMs, 10_000);
  assert.ok(k.gates.runOptions[0]!.signal instanceof AbortSignal);
});

test('more than 30 s is honoured as 30; a malformed or zero wait is ignored: no wait, no Preference-Applied, no error', async () => {
  const k = fakeKit();
  const r = await k.call('PUT', URL_, body(), { prefer: 'respond-async, wait=600' });
  assert.equal(r.headers.get('preference-applied'), 'wait=30');
  assert.equal(k.gates.runOptions[0]!.waitMs, 30_000);
  for (const prefer of ['wait=soon', 'wait=-3', 'wait=0', 'wait', 'return=minimal']) {
    const m = fakeKit();
    const r2 = await m.call('PUT', URL_, body(), { prefer });
    assert.equal(r2.status, 200, `${prefer}: ${r2.text}`);
    assert.equal(r2.headers.get('preference-applied'), null, prefer);
    assert.deepEqual(m.gates.runOptions, [], prefer);
  }
});

test('without Prefer nothing changes: no options reach the lock, no header', async () => {
  const k = fakeKit();
  const r = await k.call('PUT', URL_, body());
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('preference-applied'), null);
  assert.deepEqual(k.gates.runOptions, []);
  assert.equal(k.gates.ran.length, 1);
});

/** The real gates and lock over a fake API server, behind the FakeGates seam routeKit takes. */
class RealGates extends FakeGates {
  readonly real: MaintenanceGates;
  constructor(api: FakeServerApi) {
    super();
    this.real = new MaintenanceGates(api, new WorldLock(api, { namespace: 'minecraft' }));
  }
  override async run<T>(server: string, access: FileAccess, fn: () => Promise<T>, opts?: RunOptions): Promise<T> {
    this.ran.push({ server, access });
    return this.real.run(server, access, fn, opts);
  }
}

function realKit(annotations: Record<string, string>, route = filesWrite) {
  const api = new FakeServerApi();
  api.put(felisServer('survival', { annotations }));
  const gates = new RealGates(api);
  const ed = fakeEditor(gates, { write: () => 'b'.repeat(64), mkdir: () => undefined });
  return { api, ...routeKit(route, { gates, editor: ed.editor }), calls: ed.calls };
}

test('held by another file write: with Prefer: wait the write waits for it and succeeds; without, 409 at once', async () => {
  const k = realKit({ [LOCK]: lockValue('file-write', new Date()) });
  const refused = await k.call('PUT', URL_, body());
  assert.equal(refused.status, 409, refused.text);
  assert.equal(envelopeOf(refused).code, 'maintenance_in_progress');
  assert.equal(refused.headers.get('preference-applied'), null);

  setTimeout(() => k.api.write('survival', { metadata: { annotations: { [LOCK]: null } } }), 400);
  const t0 = Date.now();
  const r = await k.call('PUT', URL_, body(), { prefer: 'wait=10' });
  assert.equal(r.status, 200, r.text);
  assert.ok(Date.now() - t0 >= 390, 'it waited for the holder to let go');
  assert.equal(r.headers.get('preference-applied'), 'wait=10');
  assert.equal(k.calls.length, 1, 'one Job, once admitted');
  assert.equal(k.api.annotation('survival', LOCK), undefined, 'and the world is given back');
});

test('held by a backup (or a migration): refused at once even with Prefer: wait, without Preference-Applied', async () => {
  for (const kind of ['backup', 'migration']) {
    const k = realKit({ [LOCK]: lockValue(kind, new Date()) }, filesMkdir);
    const t0 = Date.now();
    const r = await k.call('POST', '/api/v1/servers/survival/files/mkdir?path=d', undefined, { prefer: 'wait=10' });
    assert.equal(r.status, 409, r.text);
    assert.equal(envelopeOf(r).code, 'maintenance_in_progress');
    assert.ok(Date.now() - t0 < 1000, `${kind}: refused at once`);
    assert.equal(r.headers.get('preference-applied'), null);
    assert.equal(k.calls.length, 0);
  }
});

test('still held when the wait runs out: 409 saying so, with Preference-Applied (it did wait)', async () => {
  const k = realKit({ [LOCK]: lockValue('file-write', new Date()) });
  const t0 = Date.now();
  const r = await k.call('PUT', URL_, body(), { prefer: 'wait=1' });
  const took = Date.now() - t0;
  assert.equal(r.status, 409, r.text);
  assert.deepEqual(envelopeOf(r), {
    code: 'maintenance_in_progress',
    message: "a file write is running on this server's world; still held after waiting 1 s: retry once it finishes",
  });
  assert.equal(r.headers.get('preference-applied'), 'wait=1');
  assert.ok(took >= 1000 && took < 3000, `bounded: ${took} ms`);
  assert.equal(k.calls.length, 0);
});
