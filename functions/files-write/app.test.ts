import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { FileEditError, WriteNotDeliveredError } from '../../lib/files/errors.ts';
import { MaintenanceBusyError, NotStoppedError } from '../../lib/maintenance/errors.ts';
import { envelopeOf, FakeGates, fakeEditor, routeKit, TOKEN } from '../../lib/testing/route-kit.ts';
import { filesWrite } from './app.ts';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const body = (text: string, extra: object = {}) => {
  const b = Buffer.from(text);
  return { content: b.toString('base64'), content_sha256: sha(b), ...extra };
};
/** `streamed`: the editor has a job key, so the content goes to the Pod (1 MiB); else into the env (256 KiB). */
function kit(streamed = false) {
  const gates = new FakeGates();
  const ed = fakeEditor(gates, { write: () => 'a'.repeat(64) });
  Object.assign(ed.editor, { streamsWrites: streamed });
  return { ...routeKit(filesWrite, { gates, editor: ed.editor }), calls: ed.calls };
}
const URL_ = '/api/v1/servers/survival/file?path=config%2Fa.yml';

test('a write runs under the world lock, answers the Job sha256, and is audited as server:path', async () => {
  const k = kit();
  const r = await k.call('PUT', URL_, body('hello'));
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body, { path: 'config/a.yml', status: 'written', sha256: 'a'.repeat(64) });
  assert.deepEqual(k.gates.entered, [{ server: 'survival', access: { op: 'write', path: 'config/a.yml' } }]);
  assert.deepEqual(k.gates.ran, [{ server: 'survival', access: { op: 'write', path: 'config/a.yml' } }]);
  assert.equal(k.calls.length, 1);
  assert.equal(k.calls[0]!.locked, true, 'the editor ran while the world was held');
  assert.equal((k.calls[0]!.args[2] as Buffer).toString(), 'hello');
  const [a] = k.audits();
  assert.equal(a!.action, 'file.write');
  assert.equal(a!.target, 'survival:config/a.yml');
  assert.equal(a!.request_id, r.headers.get('x-request-id'));
});

test('streamed, a 1 MiB write goes through and 1 MiB + 1 is 413; through the env 256 KiB + 1 is 413 saying so', async () => {
  const mib = Buffer.alloc(1 << 20, 3);
  const k = kit(true);
  const r = await k.call('PUT', URL_, { content: mib.toString('base64'), content_sha256: sha(mib) });
  assert.equal(r.status, 200, r.text);
  assert.equal((k.calls[0]!.args[2] as Buffer).length, 1 << 20);
  const over = Buffer.alloc((1 << 20) + 1, 3);
  const big = await kit(true).call('PUT', URL_, { content: over.toString('base64'), content_sha256: sha(over) });
  assert.equal(big.status, 413, big.text);
  assert.equal(envelopeOf(big).code, 'too_large');
  assert.equal(envelopeOf(big).message, 'content is 1048577 bytes; a write carries at most 1048576 bytes');
  const envOver = Buffer.alloc((256 << 10) + 1, 3);
  const env = await kit().call('PUT', URL_, { content: envOver.toString('base64'), content_sha256: sha(envOver) });
  assert.equal(env.status, 413, env.text);
  assert.match(envelopeOf(env).message, /^content is 262145 bytes; a write carries at most 262144 bytes through the Job's environment/);
  // A body past the write's own limit is refused as it arrives, naming that limit.
  const huge = await kit(true).call('PUT', URL_, { content: 'A'.repeat(2 << 20) });
  assert.equal(huge.status, 413, huge.text);
  assert.equal(envelopeOf(huge).message, 'the request body is larger than 2 MiB');
});

test('body refusals come before the lock and before any Job, each with its code', async () => {
  const big = Buffer.alloc(262_145, 1);
  for (const [b, status, code] of [
    [{}, 400, 'bad_request'],
    [{ content: null, content_sha256: sha(Buffer.alloc(0)) }, 400, 'bad_request'],
    [{ content: '***', content_sha256: sha(Buffer.alloc(0)) }, 400, 'bad_request'],
    [{ content: big.toString('base64'), content_sha256: sha(big) }, 413, 'too_large'],
    [body('x', { expect_sha256: 'ABC' }), 400, 'bad_request'],
    [body('x', { expect_sha256: 'a'.repeat(64), create_only: true }), 400, 'bad_request'],
    [{ content: 'eA==' }, 400, 'digest_required'],
    [{ content: 'eA==', content_sha256: 'A'.repeat(64) }, 400, 'bad_digest'],
    [{ content: 'eA==', content_sha256: sha(Buffer.from('y')) }, 400, 'digest_mismatch'],
    [body('x', { mode: 'overwrite' }), 400, 'bad_request'],
    ['{not json', 400, 'bad_request'],
    ['', 400, 'bad_request'],
  ] as const) {
    const k = kit();
    const r = await k.call('PUT', URL_, b);
    assert.equal(r.status, status, `${JSON.stringify(b).slice(0, 60)}: ${r.text}`);
    assert.equal(envelopeOf(r).code, code);
    assert.equal(k.gates.ran.length, 0, 'no lock taken');
    assert.equal(k.calls.length, 0, 'no Job');
    assert.equal(k.audits().length, 0, 'refusals are not audited');
  }
  // Exactly the limit is fine.
  const edge = Buffer.alloc(262_144, 1);
  assert.equal((await kit().call('PUT', URL_, { content: edge.toString('base64'), content_sha256: sha(edge) })).status, 200);
});

test('a body over 2 MiB (room for a 1 MiB write) is 413 too_large, whether declared or streamed', async () => {
  const k = kit();
  const huge = JSON.stringify({ content: 'A'.repeat(2 << 20) });
  const declared = await k.call('PUT', URL_, huge);
  assert.equal(declared.status, 413);
  assert.equal(envelopeOf(declared).code, 'too_large');
  const stream = new ReadableStream({
    start(c) {
      for (let i = 0; i < 40; i++) c.enqueue(new TextEncoder().encode('A'.repeat(64 * 1024)));
      c.close();
    },
  });
  const res = await k.app.request(URL_, { method: 'PUT', body: stream, headers: { authorization: 'Bearer route-test-token', 'content-type': 'application/json' }, duplex: 'half' } as RequestInit);
  assert.equal(res.status, 413);
  assert.equal(k.calls.length, 0);
});

test('the world held: 409 maintenance_in_progress naming the holder, and no Job runs', async () => {
  const k = kit();
  k.gates.runError = new MaintenanceBusyError('backup');
  const r = await k.call('PUT', URL_, body('x'));
  assert.equal(r.status, 409);
  assert.deepEqual(envelopeOf(r), { code: 'maintenance_in_progress', message: "a backup is running on this server's world; retry once it finishes" });
  assert.equal(k.calls.length, 0);
  assert.equal(k.audits().length, 0);
});

test('a server still running refuses at the gate, before the body is read', async () => {
  const k = kit();
  k.gates.enterError = new NotStoppedError();
  const r = await k.call('PUT', URL_, '{not json');
  assert.equal(r.status, 409);
  assert.equal(envelopeOf(r).code, 'not_stopped');
});

test("the Job's own refusals map to their codes and are not audited", async () => {
  for (const [kind, status, code] of [
    ['conflict', 409, 'file_changed'],
    ['exists', 409, 'file_exists'],
    ['no_space', 507, 'volume_full'],
    ['bad_path', 400, 'bad_path'],
  ] as const) {
    const gates = new FakeGates();
    const ed = fakeEditor(gates, {
      write: () => {
        throw new FileEditError(kind, 'config/a.yml');
      },
    });
    const k = routeKit(filesWrite, { gates, editor: ed.editor });
    const r = await k.call('PUT', URL_, body('x'));
    assert.equal(r.status, status);
    assert.equal(envelopeOf(r).code, code);
    assert.equal(k.audits().length, 0);
  }
});

test('a write whose content never reached its Job is 504 write_not_delivered, saying nothing was written', async () => {
  const gates = new FakeGates();
  const ed = fakeEditor(gates, {
    write: () => {
      throw new WriteNotDeliveredError('files-survival-0123456789abcdef');
    },
  });
  const k = routeKit(filesWrite, { gates, editor: ed.editor });
  const r = await k.call('PUT', URL_, body('x'));
  assert.equal(r.status, 504);
  assert.deepEqual(envelopeOf(r), { code: 'write_not_delivered', message: "the write's file Job could not take its content in time; nothing was written, retry shortly" });
  assert.equal(k.audits().length, 0);
});

test('a missing path, a bad name, a NUL or an over-long name are refused before any Job', async () => {
  for (const [url, status, code] of [
    ['/api/v1/servers/survival/file', 400, 'bad_request'],
    ['/api/v1/servers/survival/file?path=', 400, 'bad_request'],
    ['/api/v1/servers/Survival/file?path=a', 400, 'bad_name'],
    ['/api/v1/servers/s/file?path=a', 400, 'bad_name'],
    ['/api/v1/servers/survival/file?path=a%00b', 400, 'bad_path'],
    [`/api/v1/servers/survival/file?path=${'n'.repeat(256)}`, 400, 'bad_path'],
  ] as const) {
    const k = kit();
    const r = await k.call('PUT', url, body('x'));
    assert.equal(r.status, status, url);
    assert.equal(envelopeOf(r).code, code, url);
    assert.equal(k.calls.length, 0);
  }
});

test('without a worker image the route answers 503 files_unavailable', async () => {
  const k = routeKit(filesWrite, { editor: null });
  const r = await k.call('PUT', URL_, body('x'));
  assert.equal(r.status, 503);
  assert.equal(envelopeOf(r).code, 'files_unavailable');
});

test('the CloudEvent dev.felis.files.write carries 1 MiB as the route does', async () => {
  const mib = Buffer.alloc(1 << 20, 9);
  const k = kit(true);
  const res = await k.app.request('/', {
    method: 'POST',
    headers: {
      authorization: `Bearer ${TOKEN}`,
      'content-type': 'application/json',
      'ce-specversion': '1.0',
      'ce-id': 'ev-big-write',
      'ce-source': '/tests/write',
      'ce-type': 'dev.felis.files.write',
    },
    body: JSON.stringify({ server: 'survival', path: 'config/a.yml', body: { content: mib.toString('base64'), content_sha256: sha(mib) } }),
  });
  assert.equal(res.status, 200, await res.text());
  assert.equal((k.calls[0]!.args[2] as Buffer).length, 1 << 20);
});
