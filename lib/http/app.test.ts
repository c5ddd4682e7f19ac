import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ExportBusyError } from '../downloads/admission.ts';
import { DomainError } from '../errors.ts';
import { EDIT_ERRORS, type EditErrorKind, FileEditError, ReadDamagedError, UnknownResultCodeError } from '../files/errors.ts';
import { OutcomeUnknownError } from '../files/lost-change.ts';
import { LockFreshError, LockProtectedError, MaintenanceBusyError, NotStoppedError, NoWorldVolumeError, ServerNotFoundError, VolumeExclusiveError } from '../maintenance/errors.ts';
import { GRACE_MS } from '../protocol/lock-value.ts';
import { FilesTimeoutError, JobLostError } from '../runner/errors.ts';
import { envelopeOf, routeKit } from '../testing/route-kit.ts';
import { ApiError } from './envelope.ts';
import { DEFAULT_RETRY_AFTER_SECONDS } from './error-map.ts';
import { CallerGoneError } from './file-request.ts';
import type { RouteModule } from './serve.ts';

/** A route that throws whatever the test hands it. */
function throwing(err: () => unknown): RouteModule {
  return () => (app) => {
    app.get('/api/v1/boom', () => {
      throw err();
    });
  };
}

async function answer(err: () => unknown) {
  const k = routeKit(throwing(err));
  const r = await k.call('GET', '/api/v1/boom');
  return { r, e: envelopeOf(r), logs: k.logs };
}

/** The status callers have always met for each file editor result code. */
const EDIT_STATUS: Record<EditErrorKind, number> = {
  not_found: 404,
  bad_path: 400,
  bad_name: 400,
  too_large: 413,
  conflict: 409,
  no_space: 507,
  exists: 409,
  digest_mismatch: 400,
  gzip_invalid: 400,
  withheld_linked: 409,
  redacted_value_unknown: 409,
  batch_conflict: 409,
  trash_not_found: 404,
};

test('every file editor result code has its status and envelope code, with the Job message', async () => {
  assert.deepEqual(Object.keys(EDIT_STATUS).sort(), Object.keys(EDIT_ERRORS).sort());
  for (const kind of Object.keys(EDIT_ERRORS) as EditErrorKind[]) {
    const { r, e } = await answer(() => new FileEditError(kind, 'a.txt does not do that'));
    assert.equal(r.status, EDIT_STATUS[kind], kind);
    assert.equal(e.code, EDIT_ERRORS[kind].code, kind);
    // The Job's message alone: no internal prefix, no sentinel text doubling it.
    assert.equal(e.message, 'a.txt does not do that');
    assert.equal((await answer(() => new FileEditError(kind))).e.message, EDIT_ERRORS[kind].text, `${kind}: the sentinel when the Job said nothing`);
  }
});

test('every other domain error has one status and code', async () => {
  const rows: Array<[() => Error, number, string, string?]> = [
    [() => new ReadDamagedError(), 502, 'read_damaged'],
    [() => new FilesTimeoutError('felis-files-x'), 504, 'files_timeout', 'the file operation did not finish in time; retry shortly'],
    [() => new MaintenanceBusyError('export'), 409, 'maintenance_in_progress', "a world export or file download is running on this server's world; retry once it finishes"],
    [() => new MaintenanceBusyError(), 409, 'maintenance_in_progress', "another operation is running on this server's world; retry once it finishes"],
    [() => new NotStoppedError(), 409, 'not_stopped', 'stop the server before working with its files'],
    [() => new NoWorldVolumeError(), 409, 'no_world_volume'],
    [() => new LockProtectedError(), 409, 'lock_protected'],
    [() => new LockFreshError(), 409, 'lock_fresh'],
    [() => new ServerNotFoundError('survival'), 404, 'not_found', 'no such server'],
    [() => new ApiError(418, 'teapot' as never, 'short and stout'), 418, 'teapot', 'short and stout'],
  ];
  for (const [make, status, code, message] of rows) {
    const { r, e } = await answer(make);
    assert.equal(r.status, status, code);
    assert.equal(e.code, code);
    if (message) assert.equal(e.message, message);
  }
});

test('Retry-After, in whole seconds: on every 429 and 409 maintenance_in_progress, from the error when it can tell, else the default; on nothing else', async () => {
  const rows: Array<[() => Error, number, string, string | null]> = [
    // A holder the error reckons from: a file change, anything else, the race for the lock, a lock about to lapse.
    [() => new MaintenanceBusyError('file-write'), 409, 'maintenance_in_progress', '5'],
    [() => new MaintenanceBusyError('backup'), 409, 'maintenance_in_progress', '30'],
    [() => new MaintenanceBusyError(undefined, undefined, { contended: true }), 409, 'maintenance_in_progress', '1'],
    [() => MaintenanceBusyError.heldBy({ kind: 'restore', source: 'lock', since: new Date(Date.now() - GRACE_MS + 7_500).toISOString() }, new Date()), 409, 'maintenance_in_progress', '8'],
    [() => new ExportBusyError(2), 429, 'export_busy', '30'],
    [() => new ExportBusyError(2, 12), 429, 'export_busy', '12'],
    // Errors that cannot tell get the default: every 429, every maintenance_in_progress.
    [() => new DomainError('too_many_uploads', 'busy', 'this server already has an upload session'), 429, 'too_many_uploads', String(DEFAULT_RETRY_AFTER_SECONDS)],
    [() => new DomainError('maintenance_in_progress', 'conflict', 'held'), 409, 'maintenance_in_progress', String(DEFAULT_RETRY_AFTER_SECONDS)],
    [() => new DomainError('world_reclaiming', 'conflict', 'reaping'), 409, 'world_reclaiming', String(DEFAULT_RETRY_AFTER_SECONDS)],
    // A fraction is rounded up: never sooner than the error said.
    [() => new DomainError('export_busy', 'busy', 'busy', { retryAfterSeconds: 2.2 }), 429, 'export_busy', '3'],
    [() => new NotStoppedError(), 409, 'not_stopped', null],
    [() => new VolumeExclusiveError('world-survival-0'), 409, 'volume_exclusive', null],
    [() => new NoWorldVolumeError(), 409, 'no_world_volume', null],
    [() => new ServerNotFoundError('survival'), 404, 'not_found', null],
  ];
  for (const [make, status, code, retry] of rows) {
    const { r, e } = await answer(make);
    assert.equal(r.status, status, code);
    assert.equal(e.code, code);
    assert.equal(r.headers.get('retry-after'), retry, `${code}: ${e.message}`);
  }
});

test('anything unmapped is 500 internal with no detail for the caller, and logged with the request id', async () => {
  for (const make of [() => new Error('secret detail'), () => new UnknownResultCodeError('weird'), () => 'a string']) {
    const { r, e, logs } = await answer(make);
    assert.equal(r.status, 500);
    assert.deepEqual(e, { code: 'internal', message: 'internal error' });
    assert.ok(!r.text.includes('secret'));
    const line = JSON.parse(logs.at(-1)!) as { msg: string; request_id: string };
    assert.equal(line.msg, 'request failed');
    assert.equal(line.request_id, r.headers.get('x-request-id'));
  }
});

test('a change of many steps lost without a result is 503 outcome_unknown naming its op; the log keeps how it ended', async () => {
  const { r, e, logs } = await answer(() => new OutcomeUnknownError('delete-many', '0123456789abcdef', new JobLostError('container exited 137 (SIGKILL)', true)));
  assert.equal(r.status, 503);
  assert.equal(e.code, 'outcome_unknown');
  assert.equal(r.body.error.op, '0123456789abcdef');
  assert.match(e.message, /^the file operation 0123456789abcdef ended without a result, so its outcome is unknown: the next change of this world settles it first/);
  assert.ok(!r.text.includes('137'));
  const line = JSON.parse(logs.at(-1)!) as { msg: string; op: string; err: { message: string } };
  assert.equal(line.msg, 'file job ended without a result');
  assert.equal(line.op, '0123456789abcdef');
  assert.match(line.err.message, /exited 137/);
});

test('a Job lost mid-mutation is 500 internal telling the caller writes are atomic; the log keeps the detail', async () => {
  const { r, e, logs } = await answer(() => new JobLostError('container exited 137 (SIGKILL, OOMKilled)', true));
  assert.equal(r.status, 500);
  assert.equal(e.code, 'internal');
  assert.match(e.message, /either not made or fully made/);
  assert.ok(!r.text.includes('137'));
  const line = JSON.parse(logs.at(-1)!) as { msg: string; err: { message: string } };
  assert.equal(line.msg, 'file job ended without a result');
  assert.match(line.err.message, /exited 137/);
  const read = await answer(() => new JobLostError('container exited 1', false));
  assert.match(envelopeOf(read.r).message, /retry it/);
});

test('a caller that went away is 400 cancelled, logged at info, not as a server failure', async () => {
  const { r, e, logs } = await answer(() => new CallerGoneError());
  assert.equal(r.status, 400);
  assert.equal(e.code, 'cancelled');
  const line = JSON.parse(logs.at(-1)!) as { msg: string; level: number | string };
  assert.equal(line.msg, 'caller went away');
  assert.ok(line.level === 30 || line.level === 'info', `level ${line.level}`);
});

test("the envelope: compact JSON, newline-terminated, utf-8 JSON type, the caller's request id kept", async () => {
  const k = routeKit(throwing(() => new NotStoppedError()));
  const r = await k.call('GET', '/api/v1/boom', undefined, { 'x-request-id': 'req-123' });
  assert.equal(r.headers.get('x-request-id'), 'req-123');
  assert.equal(r.text, '{"error":{"code":"not_stopped","message":"stop the server before working with its files","request_id":"req-123"}}\n');
  assert.equal(r.headers.get('content-type'), 'application/json; charset=utf-8');
});

test('no token, a wrong token or another scheme: 401 unauthorized; health needs none', async () => {
  const k = routeKit(throwing(() => new Error('never reached')));
  for (const auth of [undefined, 'Bearer wrong', 'Basic cm91dGU=', 'Bearer ']) {
    const res = await k.app.request('/api/v1/boom', { headers: auth ? { authorization: auth } : {} });
    const r = { status: res.status, text: await res.text(), headers: res.headers, body: undefined as unknown };
    r.body = JSON.parse(r.text);
    assert.equal(r.status, 401, String(auth));
    assert.equal(envelopeOf(r).code, 'unauthorized');
  }
  const h = await k.app.request('/healthz');
  assert.equal(h.status, 200);
  assert.equal(await h.text(), '{"status":"ok"}\n');
});

test('an unknown route is 404 not_found in the envelope', async () => {
  const k = routeKit(throwing(() => new Error('x')));
  const r = await k.call('GET', '/api/v1/nothing-here');
  assert.equal(r.status, 404);
  assert.deepEqual(envelopeOf(r), { code: 'not_found', message: 'no such route' });
});

test('a known path with an unknown method is 405 method_not_allowed, with Allow naming the methods it takes', async () => {
  const k = routeKit(() => (app) => {
    app.get('/api/v1/servers/:name/thing', (c) => c.json({}));
    app.post('/api/v1/servers/:name/thing', (c) => c.json({}));
  });
  const r = await k.call('DELETE', '/api/v1/servers/survival/thing');
  assert.equal(r.status, 405);
  assert.equal(r.headers.get('allow'), 'GET, HEAD, POST');
  assert.deepEqual(envelopeOf(r), { code: 'method_not_allowed', message: 'DELETE is not a method of /api/v1/servers/survival/thing; it takes GET, HEAD, POST' });
  // The shell's own routes too; an unknown path stays 404.
  const h = await k.app.request('/healthz', { method: 'POST' });
  assert.equal(h.status, 405);
  assert.equal(h.headers.get('allow'), 'GET, HEAD');
  assert.equal((await k.call('DELETE', '/api/v1/servers/survival/other')).status, 404);
});
