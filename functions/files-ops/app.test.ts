import assert from 'node:assert/strict';
import { test } from 'node:test';
import { domainError } from '../../lib/errors.ts';
import type { FilesEditor } from '../../lib/files/editor.ts';
import type { OpsPage } from '../../lib/ops/list.ts';
import type { OpView } from '../../lib/ops/view.ts';
import { RunnerError } from '../../lib/runner/errors.ts';
import { FakeServerApi } from '../../lib/testing/fake-servers.ts';
import { felisServer } from '../../lib/testing/felis-fixtures.ts';
import { envelopeOf, routeKit } from '../../lib/testing/route-kit.ts';
import { filesOps } from './app.ts';

const OPS: OpView[] = [
  { id: '00000000000000bb', op: 'zip', path: 'world', state: 'running', started_at: '2026-12-01T06:01:00Z', done: 10, total: 40 },
  {
    id: '00000000000000aa',
    op: 'unzip',
    path: 'evil.zip',
    state: 'failed',
    started_at: '2026-12-01T06:00:00Z',
    finished_at: '2026-12-01T06:00:05Z',
    done: 0,
    total: 0,
    error: { code: 'archive_unsafe', message: 'entry escapes the target', entry: '../x' },
  },
];

function kit(ops: () => Promise<OpView[]> = async () => OPS) {
  const servers = new FakeServerApi();
  servers.put(felisServer('survival', { desiredState: 'Running', phase: 'Running', ready: true }));
  servers.put(felisServer('creative'));
  const asked: string[] = [];
  const pages: OpsPage[] = [];
  // As the editor pages (lib/ops/list.ts, tested there): after the op `after`, at most `limit`.
  const editor = {
    async ops(server: string, page: OpsPage) {
      asked.push(server);
      pages.push(page);
      const all = await ops();
      const from = page.after === undefined ? 0 : all.findIndex((o) => o.id === page.after) + 1;
      const limit = page.limit ?? 10;
      const got = all.slice(from, from + limit);
      return { ops: got, ...(all.length > from + limit ? { next: got.at(-1)!.id } : {}) };
    },
    async op(server: string, id: string) {
      asked.push(`${server} ${id}`);
      // Only survival has ops.
      const o = server === 'survival' ? (await ops()).find((x) => x.id === id) : undefined;
      if (!o) throw domainError('op_not_found', `no background op of this server has the id ${id}`);
      return o;
    },
  } as unknown as FilesEditor;
  return { ...routeKit(filesOps, { editor, servers }), asked, pages, servers };
}

test('the ops listing works while the server runs, takes no lock, and answers {ops}', async () => {
  const k = kit();
  const r = await k.call('GET', '/api/v1/servers/survival/files/ops');
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body, { ops: OPS });
  assert.deepEqual(k.asked, ['survival']);
  assert.deepEqual(k.pages, [{}], 'no limit: the editor’s default page');
  assert.equal(k.gates.entered.length + k.gates.ran.length, 0);
  assert.equal(k.audits().length, 0);
});

test('no ops is an empty list, never null', async () => {
  const r = await kit(async () => []).call('GET', '/api/v1/servers/survival/files/ops');
  assert.equal(r.status, 200);
  assert.equal(r.text, '{"ops":[]}\n');
});

test('a bad name is 400, an unknown server 404, no editor 503; a failed listing is 500 without detail', async () => {
  const bad = await kit().call('GET', '/api/v1/servers/Survival/files/ops');
  assert.equal(bad.status, 400);
  assert.equal(envelopeOf(bad).code, 'bad_name');
  const k = kit();
  const missing = await k.call('GET', '/api/v1/servers/nosuch/files/ops');
  assert.equal(missing.status, 404);
  assert.equal(envelopeOf(missing).code, 'not_found');
  assert.deepEqual(k.asked, []);
  const servers = new FakeServerApi();
  servers.put(felisServer('survival'));
  const none = await routeKit(filesOps, { editor: null, servers }).call('GET', '/api/v1/servers/survival/files/ops');
  assert.equal(none.status, 503);
  assert.equal(envelopeOf(none).code, 'files_unavailable');
  const failing = await kit(async () => {
    throw new RunnerError('list background file jobs: 10.9.8.7 forbidden');
  }).call('GET', '/api/v1/servers/survival/files/ops');
  assert.equal(failing.status, 500);
  assert.equal(envelopeOf(failing).code, 'internal');
  assert.doesNotMatch(failing.text, /10\.9\.8\.7/);
});

test('?limit= is a whole number from 1 to 100 and ?after= an op id: anything else is 400 naming the parameter and what was sent, before any read', async () => {
  const k = kit();
  for (const bad of ['0', '101', '-1', '1.5', '05', 'ten', '']) {
    const r = await k.call('GET', `/api/v1/servers/survival/files/ops?limit=${encodeURIComponent(bad)}`);
    assert.equal(r.status, 400, `limit=${bad}: ${r.text}`);
    assert.equal(envelopeOf(r).code, 'bad_request');
    assert.match(envelopeOf(r).message, /\?limit=.*1 to 100/);
  }
  for (const bad of ['a,b', 'x=y', '-a', 'a'.repeat(64)]) {
    const r = await k.call('GET', `/api/v1/servers/survival/files/ops?after=${encodeURIComponent(bad)}`);
    assert.equal(r.status, 400, `after=${bad}: ${r.text}`);
    assert.match(envelopeOf(r).message, /\?after=/);
  }
  assert.deepEqual(k.asked, []);
  for (const [q, want] of [
    ['', {}],
    ['?limit=1', { limit: 1 }],
    ['?limit=100&after=00000000000000bb', { limit: 100, after: '00000000000000bb' }],
    ['?after=', {}],
  ] as const) {
    const r = await k.call('GET', `/api/v1/servers/survival/files/ops${q}`);
    assert.equal(r.status, 200, `${q}: ${r.text}`);
    assert.deepEqual(k.pages.at(-1), want, q);
  }
});

test('a page has next (the id to pass as after) while more remain, and none on the last page', async () => {
  const k = kit();
  const first = await k.call('GET', '/api/v1/servers/survival/files/ops?limit=1');
  assert.deepEqual(first.body, { ops: [OPS[0]], next: OPS[0]!.id });
  const last = await k.call('GET', `/api/v1/servers/survival/files/ops?limit=1&after=${first.body.next}`);
  assert.deepEqual(last.body, { ops: [OPS[1]] });
});

test('one op: {op} by its id; an id of no op of this server (another server’s too) is 404 op_not_found; a malformed id 400 before any read', async () => {
  const k = kit();
  const r = await k.call('GET', '/api/v1/servers/survival/files/ops/00000000000000aa');
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body, { op: OPS[1] });
  for (const [server, id] of [
    ['survival', '00000000000000cc'],
    ['creative', '00000000000000aa'],
  ]) {
    const miss = await k.call('GET', `/api/v1/servers/${server}/files/ops/${id}`);
    assert.equal(miss.status, 404, miss.text);
    assert.equal(envelopeOf(miss).code, 'op_not_found');
    assert.match(envelopeOf(miss).message, new RegExp(id!));
  }
  k.asked.length = 0;
  for (const bad of ['a%2Cb', 'x%3Dy', '-x', 'a'.repeat(64)]) {
    const b = await k.call('GET', `/api/v1/servers/survival/files/ops/${bad}`);
    assert.equal(b.status, 400, `${bad}: ${b.text}`);
    assert.equal(envelopeOf(b).code, 'bad_request');
  }
  assert.deepEqual(k.asked, [], 'no read for a malformed id');
  const gone = await k.call('GET', '/api/v1/servers/nosuch/files/ops/00000000000000aa');
  assert.equal(gone.status, 404);
  assert.equal(envelopeOf(gone).code, 'not_found');
});
