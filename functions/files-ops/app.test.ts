import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { FilesEditor } from '../../lib/files/editor.ts';
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
  const asked: string[] = [];
  const editor = {
    async ops(server: string) {
      asked.push(server);
      return ops();
    },
  } as unknown as FilesEditor;
  return { ...routeKit(filesOps, { editor, servers }), asked, servers };
}

test('the ops listing works while the server runs, takes no lock, and answers {ops}', async () => {
  const k = kit();
  const r = await k.call('GET', '/api/v1/servers/survival/files/ops');
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body, { ops: OPS });
  assert.deepEqual(k.asked, ['survival']);
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
