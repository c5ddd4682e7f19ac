import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MaintenanceBusyError, NotStoppedError } from '../../lib/maintenance/errors.ts';
import { startedView } from '../../lib/ops/view.ts';
import { RunnerError } from '../../lib/runner/errors.ts';
import { backgroundKit, deliverer, realEditorKit } from '../../lib/testing/background-kit.ts';
import { envelopeOf, routeKit, TOKEN } from '../../lib/testing/route-kit.ts';
import { filesUnzip } from './app.ts';

const VIEW = startedView('0123456789abcdef', 'unzip', 'maps/pack.zip', new Date('2026-12-01T06:00:00Z'));

const kit = (opts: { start?: () => unknown; earlier?: unknown } = {}) =>
  backgroundKit(filesUnzip, { start: (req) => (opts.start ? opts.start() : { ...VIEW, path: req.path }), earlier: opts.earlier });

const URL = (p: string) => `/api/v1/servers/survival/files/unzip?path=${encodeURIComponent(p)}`;

test('unzip starts the Job under the world lock and answers 202 with the running op; audited', async () => {
  const k = kit();
  const r = await k.call('POST', URL('maps/pack.zip'), { overwrite: true, to: 'maps/pack' });
  assert.equal(r.status, 202, r.text);
  assert.deepEqual(r.body, { op: VIEW });
  assert.deepEqual(k.starts, [{ req: { op: 'unzip', path: 'maps/pack.zip', overwrite: true, to: 'maps/pack' }, locked: true }]);
  assert.deepEqual(k.gates.ran, [{ server: 'survival', access: { op: 'unzip', path: 'maps/pack.zip' } }]);
  const [a] = k.audits();
  assert.equal(a!.action, 'file.unzip');
  assert.equal(a!.target, 'survival:maps/pack.zip');
  assert.deepEqual(a!.payload, { overwrite: true, to: 'maps/pack', op: VIEW.id });
});

test('overwrite defaults to false and no --to means the archive’s own folder', async () => {
  const k = kit();
  const r = await k.call('POST', URL('pack.zip'), {});
  assert.equal(r.status, 202, r.text);
  assert.deepEqual(k.starts[0]!.req, { op: 'unzip', path: 'pack.zip', overwrite: false });
});

test('only an archive or a single compressed file the Job reads (any case) may be extracted: anything else never reaches the lock', async () => {
  for (const p of [
    'maps/A.ZIP',
    'b.Zip',
    'c.zip',
    'a.tar',
    'b.TAR.GZ',
    'c.tgz',
    'd.Tar.gz',
    'a.tar.bz2',
    'a.TBZ2',
    'a.tar.xz',
    'a.txz',
    'a.tar.zst',
    'a.tzst',
    'a.7z',
    'a.rar',
    'a.gz',
    'a.bz2',
    'a.XZ',
    'a.zst',
  ]) {
    const k = kit();
    assert.equal((await k.call('POST', URL(p), { overwrite: false })).status, 202, p);
    assert.equal(k.starts[0]!.req.path, p);
  }
  for (const p of ['a.zip.bak', '.gz', 'zip', 'a.lz', 'a.tar.lz4', 'a.tar.bak']) {
    const k = kit();
    const r = await k.call('POST', URL(p), { overwrite: false });
    assert.equal(r.status, 400, p);
    assert.equal(envelopeOf(r).code, 'bad_path', p);
    assert.match(envelopeOf(r).message, /only a \.zip, \.tar, \.tar\.gz\/\.tgz, .*can be extracted/);
    assert.equal(k.gates.ran.length, 0);
    assert.equal(k.starts.length, 0);
  }
});

test('the body is strict: each mistake is a 400 naming it, before the lock; an absent body is {}', async () => {
  const cases: Array<[unknown, string, RegExp]> = [
    [{ overwrite: 'yes' }, 'bad_request', /overwrite/],
    [{ overwrite: true, force: true }, 'bad_request', /force|unrecognized/i],
    [{ to: 5 }, 'bad_request', /to/],
    [{ to: '' }, 'bad_request', /to: leave it out/],
    [{ to: 'a\u0000b' }, 'bad_path', /NUL/],
    [{ to: `a/${'x'.repeat(256)}` }, 'bad_path', /longer than 255 bytes/],
    [[], 'bad_request', /invalid request/],
  ];
  for (const [body, code, msg] of cases) {
    const k = kit();
    const r = await k.call('POST', URL('pack.zip'), body);
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.equal(envelopeOf(r).code, code, JSON.stringify(body));
    assert.match(envelopeOf(r).message, msg, JSON.stringify(body));
    assert.equal(k.gates.ran.length, 0);
  }
  const k = kit();
  const r = await k.app.request(URL('pack.zip'), { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: '{"overwrite":' });
  assert.equal(r.status, 400);
  const absent = await kit().call('POST', URL('pack.zip'));
  assert.equal(absent.status, 202, absent.text);
});

test('a path is required; a running server and a held world are refused; nothing is started or audited', async () => {
  const none = kit();
  const r0 = await none.call('POST', '/api/v1/servers/survival/files/unzip', { overwrite: false });
  assert.equal(r0.status, 400);
  assert.equal(envelopeOf(r0).code, 'bad_request');
  const running = kit();
  running.gates.enterError = new NotStoppedError();
  const r1 = await running.call('POST', URL('pack.zip'), {});
  assert.equal(r1.status, 409);
  assert.equal(envelopeOf(r1).code, 'not_stopped');
  const busy = kit();
  busy.gates.runError = new MaintenanceBusyError('file-write');
  const r2 = await busy.call('POST', URL('pack.zip'), {});
  assert.equal(r2.status, 409);
  assert.equal(envelopeOf(r2).code, 'maintenance_in_progress');
  for (const k of [none, running, busy]) {
    assert.equal(k.starts.length, 0);
    assert.equal(k.audits().length, 0);
  }
});

test('a failed start is a 500 that hides its detail; not audited', async () => {
  const k = kit({
    start: () => {
      throw new RunnerError('create file job x: 10.0.0.1 refused');
    },
  });
  const r = await k.call('POST', URL('pack.zip'), {});
  assert.equal(r.status, 500);
  assert.equal(envelopeOf(r).code, 'internal');
  assert.doesNotMatch(r.text, /10\.0\.0\.1/);
  assert.equal(k.audits().length, 0);
});

test('no editor configured: 503 files_unavailable', async () => {
  const k = routeKit(filesUnzip, { editor: null });
  const r = await k.call('POST', URL('pack.zip'), {});
  assert.equal(r.status, 503);
  assert.equal(envelopeOf(r).code, 'files_unavailable');
});

test('a redelivered unzip event answers the same op without a second Job or a second lock', async () => {
  const k = realEditorKit(filesUnzip);
  const { jobs, gates } = k;
  const send = deliverer(k, 'dev.felis.files.unzip');
  const deliver = (id: string, path = 'pack.zip') => send(id, { server: 'survival', path, body: { overwrite: false } });
  const first = await deliver('ev-1');
  assert.equal(first.status, 202, JSON.stringify(first.body));
  const again = await deliver('ev-1');
  assert.equal(again.status, 202);
  assert.deepEqual(again.body, first.body);
  assert.equal(jobs.jobs.length, 1);
  assert.equal(gates.ran.length, 1, 'the redelivery takes no lock: the running op holds the world');
  const reused = await deliver('ev-1', 'other.zip');
  assert.equal(reused.status, 409);
  assert.equal(reused.body.error.code, 'event_conflict');
  const other = await deliver('ev-2');
  assert.equal(other.status, 202);
  assert.notEqual(other.body.op.id, first.body.op.id);
  assert.equal(jobs.jobs.length, 2);
});
