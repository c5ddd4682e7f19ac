import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { currentEventKey, withEvent } from '../../lib/events/scope.ts';
import { NotStoppedError } from '../../lib/maintenance/errors.ts';
import type { Result } from '../../lib/protocol/result.ts';
import { envelopeOf, FakeGates, fakeEditor, RUNNING_SERVER, realGates, routeKit } from '../../lib/testing/route-kit.ts';
import { filesNbt } from './app.ts';
import { fileOf, levelDoc, payloadOf } from './fixtures.test-kit.ts';
import { nbtReport } from './job/nbt.ts';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const FILE = fileOf(payloadOf(levelDoc()), 'gzip');
/** What the Job answers for FILE (its own report builder, on the fixture's bytes). */
const REPORT = nbtReport('world/level.dat', FILE);
const URL_ = '/api/v1/servers/survival/files/nbt?path=world%2Flevel.dat';
const rootJson = () => JSON.parse(JSON.stringify((REPORT as { root: unknown }).root));

function kit(answer: Result = { report: REPORT }) {
  const gates = new FakeGates();
  const ed = fakeEditor(gates, { run: () => answer, write: (_t, _p, bytes) => sha(bytes as Buffer) });
  return { ...routeKit(filesNbt, { gates, editor: ed.editor }), calls: ed.calls };
}

test('a read takes no lock, runs the nbt op on the path, and answers the typed root without the payload digest', async () => {
  const k = kit();
  const r = await k.call('GET', URL_);
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(Object.keys(r.body), ['path', 'compression', 'sha256', 'root', 'world_state']);
  assert.deepEqual([r.body.compression, r.body.sha256, r.body.world_state], ['gzip', sha(FILE), 'stopped']);
  assert.equal(r.body.root.value.Data.value.LevelName.value, 'Felis Survival');
  assert.deepEqual(k.gates.entered, [{ server: 'survival', access: { op: 'nbt', path: 'world/level.dat' } }]);
  assert.equal(k.gates.ran.length, 0, 'no lock');
  assert.deepEqual(k.calls[0]!.args.slice(1, 4), ['nbt', 'world/level.dat', {}]);
  const running = kit();
  running.deps.gates = realGates(RUNNING_SERVER).gates;
  assert.equal((await running.call('GET', URL_)).body.world_state, 'running');
});

test("the Job's refusals are their envelopes: nbt_invalid 400 with the Job's words, not_found 404, too_large 413", async () => {
  for (const [answer, status, code] of [
    [{ code: 'nbt_invalid', error: 'world/level.dat is not an NBT file this route reads: it ends inside Data' }, 400, 'nbt_invalid'],
    [{ code: 'not_found', error: 'world/level.dat does not exist' }, 404, 'not_found'],
    [{ code: 'too_large', error: 'world/level.dat is too large to answer as JSON' }, 413, 'too_large'],
  ] as const) {
    const r = await kit(answer).call('GET', URL_);
    assert.equal(r.status, status, r.text);
    assert.equal(envelopeOf(r).code, code);
  }
  assert.match(envelopeOf(await kit({ code: 'nbt_invalid', error: 'world/level.dat is not an NBT file this route reads: x' }).call('GET', URL_)).message, /^world\/level\.dat is not an NBT file/);
  const off = kit();
  off.gates.enterError = new NotStoppedError();
  assert.equal((await off.call('GET', URL_)).status, 409);
});

test('an unchanged document writes nothing: read again under the lock, answered unchanged with the digest on disk, not audited', async () => {
  const k = kit();
  const r = await k.call('PUT', URL_, { root: rootJson(), expect_sha256: sha(FILE) });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body, { path: 'world/level.dat', status: 'unchanged', sha256: sha(FILE) });
  assert.deepEqual(
    k.calls.map((c) => [c.method, c.locked]),
    [['run', true]],
  );
  assert.equal(k.audits().length, 0);
});

test('a changed document is compressed as the file was and written through the write op, with expect_sha256; audited', async () => {
  const k = kit();
  const root = rootJson();
  root.value.Data.value.LevelName.value = 'Renamed';
  const r = await k.call('PUT', URL_, { root, expect_sha256: sha(FILE) });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.status, 'written');
  assert.deepEqual(
    k.calls.map((c) => [c.method, c.locked]),
    [
      ['run', true],
      ['write', true],
    ],
  );
  const [, path, bytes, opts] = k.calls[1]!.args as [unknown, string, Buffer, { sha256: string; expectSha256: string }];
  assert.equal(path, 'world/level.dat');
  assert.ok(gunzipSync(bytes).includes(Buffer.from('Renamed')), 'gzip, as the file was');
  assert.deepEqual(opts, { sha256: sha(bytes), expectSha256: sha(FILE) });
  assert.equal(r.body.sha256, sha(bytes));
  const [a] = k.audits();
  assert.deepEqual([a!.action, a!.target], ['file.nbt_write', 'survival:world/level.dat']);
  // Asked to, the same document changes only the compression: a write too.
  const z = kit();
  const zr = await z.call('PUT', URL_, { root: rootJson(), compression: 'none', expect_sha256: sha(FILE) });
  assert.equal(zr.body.status, 'written');
  assert.ok((z.calls[1]!.args[2] as Buffer).equals(payloadOf(levelDoc())));
});

test('a stale expect_sha256 is 409 file_changed and nothing is written; body refusals come before the lock and any Job', async () => {
  const stale = kit();
  const s = await stale.call('PUT', URL_, { root: rootJson(), expect_sha256: 'b'.repeat(64) });
  assert.equal(s.status, 409, s.text);
  assert.equal(envelopeOf(s).code, 'file_changed');
  assert.deepEqual(
    stale.calls.map((c) => c.method),
    ['run'],
  );
  const bad = rootJson();
  bad.value.Data.value.Time.value = 1.5;
  for (const [b, code, re] of [
    [{ root: bad, expect_sha256: sha(FILE) }, 'nbt_invalid', /^the body's root\.value\.Data\.value\.Time\.value must be a long/],
    [{ root: rootJson() }, 'bad_request', /expect_sha256/],
    [{ expect_sha256: sha(FILE) }, 'bad_request', /root/],
    [{ root: 'level', expect_sha256: sha(FILE) }, 'bad_request', /root/],
    [{ root: rootJson(), expect_sha256: 'ABC' }, 'bad_request', /expect_sha256 must be 64 lowercase hex/],
    [{ root: rootJson(), expect_sha256: sha(FILE), compression: 'lz4' }, 'bad_request', /compression/],
    [{ root: rootJson(), expect_sha256: sha(FILE), extra: 1 }, 'bad_request', /extra/],
  ] as const) {
    const k = kit();
    const r = await k.call('PUT', URL_, b);
    assert.equal(r.status, 400, r.text);
    assert.equal(envelopeOf(r).code, code);
    assert.match(envelopeOf(r).message, re);
    assert.equal(k.gates.ran.length, 0, 'no lock taken');
    assert.equal(k.calls.length, 0, 'no Job');
  }
});

test("serving an event, only the write's Job carries it; a stale digest is then the write Job's to refuse (or a redelivery's to answer)", async () => {
  const seen: Array<[string, string | undefined]> = [];
  const gates = new FakeGates();
  const ed = fakeEditor(gates, {
    run: () => (seen.push(['run', currentEventKey()]), { report: REPORT }),
    write: (_t, _p, bytes) => (seen.push(['write', currentEventKey()]), sha(bytes as Buffer)),
  });
  const k = routeKit(filesNbt, { gates, editor: ed.editor });
  const root = rootJson();
  root.value.Data.value.LevelName.value = 'Renamed';
  const r = await withEvent('ev-1', () => k.call('PUT', URL_, { root, expect_sha256: 'c'.repeat(64) }));
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(seen, [
    ['run', undefined],
    ['write', 'ev-1'],
  ]);
  assert.equal((ed.calls[1]!.args[3] as { expectSha256: string }).expectSha256, 'c'.repeat(64));
});
