import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { FilesEditor } from '../../lib/files/editor.ts';
import { NotStoppedError } from '../../lib/maintenance/errors.ts';
import type { StartRequest } from '../../lib/ops/background.ts';
import { startedView } from '../../lib/ops/view.ts';
import type { Result } from '../../lib/protocol/result.ts';
import { envelopeOf, FakeGates, fakeEditor, RUNNING_SERVER, realGates, routeKit } from '../../lib/testing/route-kit.ts';
import { filesRegion } from './app.ts';
import type { PruneReport, RegionReport } from './op.ts';

const TABLE: RegionReport = {
  path: 'world/region/r.0.0.mca',
  chunks: [{ x: 0, z: 0, sectors: 1, bytes: 300, timestamp: 1700000000, compression: 'zlib', external: false, inhabited_ticks: '1152921504606846976' }],
  sectors_used: 3,
  sectors_free: 0,
};
const PLAN: PruneReport = {
  region: 'world/region',
  below: '72000',
  scanned: 2,
  files_changed: 1,
  files: [{ path: 'world/region/r.0.0.mca', chunks_removed: 3, bytes_freed: 12288, removed: false }],
  chunks_removed: 3,
  bytes_freed: 12288,
  unreadable_chunks: 0,
  skipped: [],
};
const GET = '/api/v1/servers/survival/files/region?path=world%2Fregion%2Fr.0.0.mca';
const PRUNE = '/api/v1/servers/survival/files/region/prune';

function kit(answer: (op: string) => Result = (op) => ({ report: op === 'region' ? TABLE : PLAN })) {
  const gates = new FakeGates();
  const ed = fakeEditor(gates, { run: (_t, op) => answer(op as string) });
  const starts: Array<{ req: StartRequest; locked: boolean }> = [];
  const editor = Object.assign(ed.editor, {
    earlierOp: async () => undefined,
    start: async (_t: unknown, req: StartRequest) => {
      starts.push({ req, locked: gates.holding });
      return startedView('00000000000000rr', req.op, req.path, new Date('2026-12-07T22:00:00Z'));
    },
  }) as FilesEditor;
  return { ...routeKit(filesRegion, { gates, editor }), calls: ed.calls, starts };
}

test('the table: no lock, the region op on the path, its report and world_state; a long past 2^53 stays a string', async () => {
  const k = kit();
  const r = await k.call('GET', GET);
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body, { ...TABLE, world_state: 'stopped' });
  assert.deepEqual(k.gates.entered, [{ server: 'survival', access: { op: 'region', path: 'world/region/r.0.0.mca' } }]);
  assert.equal(k.gates.ran.length, 0, 'no lock');
  assert.deepEqual(k.calls[0]!.args.slice(1, 4), ['region', 'world/region/r.0.0.mca', {}]);
  assert.equal(k.audits().length, 0);
  const running = kit();
  running.deps.gates = realGates(RUNNING_SERVER, { readWhileRunning: true }).gates;
  const rr = await running.call('GET', GET);
  assert.equal(rr.body.world_state, 'running', rr.text);
});

test("the table's refusals: region_invalid 400 in the Job's words, not_found 404, a path out 400 before any Job", async () => {
  const bad = await kit(() => ({ code: 'region_invalid', error: 'world/region/r.0.0.mca cannot be read as a region file: it is 5 bytes' })).call('GET', GET);
  assert.equal(bad.status, 400);
  assert.deepEqual(envelopeOf(bad), { code: 'region_invalid', message: 'world/region/r.0.0.mca cannot be read as a region file: it is 5 bytes' });
  assert.equal((await kit(() => ({ code: 'not_found', error: 'x does not exist' })).call('GET', GET)).status, 404);
  const k = kit();
  const out = await k.call('GET', '/api/v1/servers/survival/files/region?path=..%2Fx');
  assert.equal(out.status, 400);
  assert.equal(envelopeOf(out).code, 'bad_path');
  assert.equal(k.calls.length, 0);
});

test('a dry run: gated as the prune (stopped), the region-plan op with the bound, 200 with what would go, no lock, not audited', async () => {
  const k = kit();
  const r = await k.call('POST', PRUNE, { path: 'world', inhabited_below_ticks: 72000, dry_run: true });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body, { dry_run: true, ...PLAN });
  assert.deepEqual(k.gates.entered, [{ server: 'survival', access: { op: 'region-prune', path: 'world' } }]);
  assert.deepEqual(k.calls[0]!.args.slice(1, 4), ['region-plan', 'world', { below: '72000' }]);
  assert.equal(k.gates.ran.length, 0);
  assert.equal(k.starts.length, 0);
  assert.equal(k.audits().length, 0);
});

test('a prune starts the background op under the world lock: 202 with its op and Location, the bound as a decimal, audited', async () => {
  const k = kit();
  const r = await k.call('POST', PRUNE, { path: '/world/region/', inhabited_below_ticks: '9223372036854775807' });
  assert.equal(r.status, 202, r.text);
  assert.equal(r.headers.get('location'), '/api/v1/servers/survival/files/ops/00000000000000rr');
  assert.equal(r.body.op.op, 'region-prune');
  assert.deepEqual(k.starts, [{ req: { op: 'region-prune', path: 'world/region', fields: { below: '9223372036854775807' } }, locked: true }]);
  assert.deepEqual(k.gates.ran, [{ server: 'survival', access: { op: 'region-prune', path: 'world/region' } }]);
  const [a] = k.audits();
  assert.equal(a!.action, 'file.region_prune');
  assert.deepEqual(a!.payload, { inhabited_below_ticks: '9223372036854775807', op: '00000000000000rr' });
  // The root is a world too (a volume that is one).
  const root = kit();
  assert.equal((await root.call('POST', PRUNE, { path: '/', inhabited_below_ticks: 0 })).status, 202);
  assert.equal(root.starts[0]!.req.path, '');
});

test('every refusal is before the lock and any Job: a bad bound, a path out, a missing field; a running server 409 for both', async () => {
  for (const [body, code] of [
    [{ path: 'world', inhabited_below_ticks: -1 }, 'bad_request'],
    [{ path: 'world', inhabited_below_ticks: 1.5 }, 'bad_request'],
    [{ path: 'world', inhabited_below_ticks: 2 ** 60 }, 'bad_request'],
    [{ path: 'world', inhabited_below_ticks: '01' }, 'bad_request'],
    [{ path: 'world', inhabited_below_ticks: '9223372036854775808' }, 'bad_request'],
    [{ path: 'world', inhabited_below_ticks: 'soon' }, 'bad_request'],
    [{ path: 'world' }, 'bad_request'],
    [{ path: 'world', inhabited_below_ticks: 5, extra: 1 }, 'bad_request'],
    [{ path: '../x', inhabited_below_ticks: 5 }, 'bad_path'],
    [{ path: 'a\u0000b', inhabited_below_ticks: 5 }, 'bad_path'],
  ] as const) {
    const k = kit();
    const r = await k.call('POST', PRUNE, body);
    assert.equal(r.status, 400, `${JSON.stringify(body)}: ${r.text}`);
    assert.equal(envelopeOf(r).code, code, JSON.stringify(body));
    assert.equal(k.calls.length + k.starts.length + k.gates.ran.length, 0);
  }
  for (const dry of [true, false]) {
    const k = kit();
    k.gates.enterError = new NotStoppedError();
    const r = await k.call('POST', PRUNE, { path: 'world', inhabited_below_ticks: 5, dry_run: dry });
    assert.equal(r.status, 409, r.text);
    assert.equal(envelopeOf(r).code, 'not_stopped');
    assert.equal(k.calls.length + k.starts.length, 0);
  }
});
