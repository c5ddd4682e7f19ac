import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FileEditError } from '../../lib/files/errors.ts';
import { lostMessage, OutcomeUnknownError } from '../../lib/files/lost-change.ts';
import { MaintenanceBusyError } from '../../lib/maintenance/errors.ts';
import { JobLostError } from '../../lib/runner/errors.ts';
import { envelopeOf, FakeGates, fakeEditor, routeKit } from '../../lib/testing/route-kit.ts';
import { filesBatch } from './app.ts';

function kit(answer?: (...args: unknown[]) => unknown) {
  const gates = new FakeGates();
  const ed = fakeEditor(gates, { batch: answer ?? ((_t: unknown, _op: unknown, b: any) => ({ done: b.paths ?? b.moves?.map((m: any) => m.from) ?? b.files.map((f: any) => f.path), failed: [] })) });
  return { ...routeKit(filesBatch, { gates, editor: ed.editor }), calls: ed.calls };
}

const S = '/api/v1/servers/survival';

test('delete: one editor call for every path, under the world lock, audited once with the paths done', async () => {
  const k = kit();
  const paths = Array.from({ length: 500 }, (_, i) => `logs/${i}.log`);
  const r = await k.call('POST', `${S}/files/delete`, { paths });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body, { done: paths, failed: [] });
  assert.equal(k.calls.length, 1);
  assert.equal(k.calls[0]!.locked, true);
  assert.equal(k.calls[0]!.args[1], 'delete-many');
  assert.deepEqual(k.calls[0]!.args[2], { paths });
  assert.deepEqual(k.gates.ran, [{ server: 'survival', access: { op: 'delete-many', path: '.' } }]);
  const a = k.audits();
  assert.equal(a.length, 1);
  assert.equal(a[0]!.action, 'file.delete');
  assert.equal(a[0]!.target, 'survival');
  assert.deepEqual((a[0]!.payload as any).paths, paths);
});

test('move and chmod: their ops and audit actions; only what was done is audited', async () => {
  const k = kit((_t, _op, b: any) => ({ done: [b.moves[1].from], failed: [{ path: b.moves[0].from, error: { code: 'volume_full', message: 'full' } }] }));
  const moves = [
    { from: 'a', to: 'b' },
    { from: 'c', to: 'd' },
  ];
  const r = await k.call('POST', `${S}/files/move`, { moves });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body, { done: ['c'], failed: [{ path: 'a', error: { code: 'volume_full', message: 'full' } }] });
  assert.equal(k.calls[0]!.args[1], 'move-many');
  assert.deepEqual(
    k.audits().map((a) => [a.action, (a.payload as any).moves]),
    [['file.move', [{ from: 'c', to: 'd' }]]],
  );
  const c = kit();
  const files = [{ path: 'run.sh', mode: '755' }];
  const r2 = await c.call('POST', `${S}/files/chmod`, { files });
  assert.equal(r2.status, 200, r2.text);
  assert.equal(c.calls[0]!.args[1], 'chmod-many');
  assert.deepEqual(
    c.audits().map((a) => [a.action, (a.payload as any).files]),
    [['file.chmod', files]],
  );
});

test("the Job's refusal of the first bad item answers its code with its path in the envelope; not audited", async () => {
  const k = kit(() => {
    throw new FileEditError('bad_path', '"../x": the path leads out of the world', '../x');
  });
  const r = await k.call('POST', `${S}/files/delete`, { paths: ['a', '../x'] });
  assert.equal(r.status, 400);
  assert.equal(envelopeOf(r).code, 'bad_path');
  assert.equal(r.body.error.path, '../x');
  assert.equal(k.audits().length, 0);
  const c = kit(() => {
    throw new FileEditError('batch_conflict', 'two moves of the batch go to b', 'b');
  });
  const r2 = await c.call('POST', `${S}/files/move`, {
    moves: [
      { from: 'a', to: 'b' },
      { from: 'c', to: 'b' },
    ],
  });
  assert.equal(r2.status, 409);
  assert.equal(envelopeOf(r2).code, 'batch_conflict');
  assert.equal(r2.body.error.path, 'b');
  // An error about no item in particular has no path.
  const one = await kit(() => {
    throw new FileEditError('not_found');
  }).call('POST', `${S}/files/delete`, { paths: ['a'] });
  assert.equal(one.body.error.path, undefined);
});

test('a batch whose Job or edit session ended without a result is 503 outcome_unknown with its op id; not audited', async () => {
  for (const [route, body, op] of [
    ['delete', { paths: ['a', 'b'] }, 'delete-many'],
    ['move', { moves: [{ from: 'a', to: 'b' }] }, 'move-many'],
    ['chmod', { files: [{ path: 'a', mode: '644' }] }, 'chmod-many'],
  ] as const) {
    const k = kit(() => {
      throw new OutcomeUnknownError(op, '0123456789abcdef', new JobLostError('the pod vanished', true));
    });
    const r = await k.call('POST', `${S}/files/${route}`, body);
    assert.equal(r.status, 503, r.text);
    assert.equal(envelopeOf(r).code, 'outcome_unknown');
    assert.equal(r.body.error.op, '0123456789abcdef');
    assert.equal(r.body.error.message, lostMessage(op, '0123456789abcdef'));
    assert.equal(k.audits().length, 0);
  }
});

test('bodies are checked before any Job: shape, counts, modes, paths no file can have', async () => {
  const cases: Array<[string, unknown, number, string, string | undefined]> = [
    ['delete', { paths: [] }, 400, 'bad_request', undefined],
    ['delete', { paths: Array.from({ length: 1001 }, (_, i) => `f${i}`) }, 400, 'bad_request', undefined],
    ['delete', { paths: ['a', ''] }, 400, 'bad_request', undefined],
    ['delete', { paths: 'a' }, 400, 'bad_request', undefined],
    ['delete', { paths: ['a'], extra: 1 }, 400, 'bad_request', undefined],
    ['delete', { paths: ['a', 'b\0c'] }, 400, 'bad_path', 'b\0c'],
    ['move', { moves: [{ from: 'a', to: `x/${'y'.repeat(256)}` }] }, 400, 'bad_path', `x/${'y'.repeat(256)}`],
    // A move's `to` is created, so held to the name rule; a `from` only addressed is not.
    [
      'move',
      {
        moves: [
          { from: 'odd\u0007', to: 'fine' },
          { from: 'b', to: 'x/evil\u202e.txt' },
        ],
      },
      400,
      'bad_path',
      'x/evil\u202e.txt',
    ],
    ['delete', { paths: ['odd\u0007', 'b\0c'] }, 400, 'bad_path', 'b\0c'],
    ['move', { moves: [{ from: 'a' }] }, 400, 'bad_request', undefined],
    ['chmod', { files: [{ path: 'a', mode: '4755' }] }, 400, 'bad_request', undefined],
    ['chmod', { files: [{ path: 'a', mode: 644 }] }, 400, 'bad_request', undefined],
    ['chmod', { files: [{ path: 'a', mode: '648' }] }, 400, 'bad_request', undefined],
  ];
  for (const [route, body, status, code, path] of cases) {
    const k = kit();
    const r = await k.call('POST', `${S}/files/${route}`, body);
    const what = `${route} ${JSON.stringify(body).slice(0, 80)}`;
    assert.equal(r.status, status, what);
    assert.equal(envelopeOf(r).code, code, what);
    assert.equal(r.body.error.path, path, what);
    assert.equal(k.calls.length, 0, what);
    assert.equal(k.gates.ran.length, 0, what);
  }
  const mode = await kit().call('POST', `${S}/files/chmod`, { files: [{ path: 'a', mode: '4755' }] });
  assert.match(envelopeOf(mode).message, /three octal digits/);
});

test('a body over 1 MiB is 413 too_large; one that would not fit a Job spec too', async () => {
  const k = kit();
  const big = await k.call('POST', `${S}/files/delete`, { paths: Array.from({ length: 300 }, (_, i) => `${i}/${'x'.repeat(3600)}`) });
  assert.equal(big.status, 413);
  assert.equal(envelopeOf(big).code, 'too_large');
  // Random printable names barely compress: under 1 MiB of body, but gzipped and base64 over the 1 MiB the Job spec carries.
  const chars = Array.from({ length: 94 }, (_, i) => String.fromCharCode(33 + i)).filter((ch) => ch !== '/' && ch !== '"' && ch !== '\\');
  const seg = () => Array.from(crypto.getRandomValues(new Uint8Array(250)), (b) => chars[b % chars.length]).join('');
  const random = Array.from({ length: 1000 }, () => [seg(), seg(), seg(), seg()].join('/'));
  assert.ok(JSON.stringify({ paths: random }).length < 1 << 20);
  const r = await k.call('POST', `${S}/files/delete`, { paths: random });
  assert.equal(r.status, 413, r.text.slice(0, 200));
  assert.equal(envelopeOf(r).code, 'too_large');
  assert.equal(k.calls.length, 0);
});

test('the world held: 409, no Job; a missing server before a bad body', async () => {
  const k = kit();
  k.gates.runError = new MaintenanceBusyError('restore');
  const r = await k.call('POST', `${S}/files/delete`, { paths: ['a'] });
  assert.equal(r.status, 409);
  assert.equal(envelopeOf(r).code, 'maintenance_in_progress');
  assert.equal(k.calls.length, 0);
  const bad = await kit().call('POST', '/api/v1/servers/Survival/files/delete', { nope: 1 });
  assert.equal(envelopeOf(bad).code, 'bad_name');
});

test("a many-file delete answers the undo trash's record as trash_id (camelCase never leaks); a move answers none", async () => {
  const k = kit((_t: unknown, _op: unknown, b: any) => ({ done: b.paths ?? b.moves.map((m: any) => m.from), failed: [], trashId: '0190a1b2c3d4e5f6' }));
  const r = await k.call('POST', `${S}/files/delete`, { paths: ['a', 'b'] });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body, { done: ['a', 'b'], failed: [], trash_id: '0190a1b2c3d4e5f6' });
  assert.equal((k.audits()[0]!.payload as { trash_id?: string }).trash_id, '0190a1b2c3d4e5f6');
  const m = await k.call('POST', `${S}/files/move`, { moves: [{ from: 'a', to: 'b' }] });
  assert.deepEqual(m.body, { done: ['a'], failed: [] });
});
