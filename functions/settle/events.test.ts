import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createApp } from '../../lib/http/app.ts';
import type { Deps } from '../../lib/http/deps.ts';
import { createLogger } from '../../lib/log.ts';
import type { PullPlacer } from '../../lib/maintenance/pull-placement.ts';
import type { Settler } from '../../lib/maintenance/settle.ts';
import { settleRoutes } from './app.ts';

const TOKEN = 'token-0123456789';
function appCounting() {
  const logger = createLogger('t', { LOG_LEVEL: 'silent' });
  const state = { passes: 0, pulls: 0 };
  const settler = { settleOnce: async () => (state.passes++, [{ job: 'snap-a', server: 'a', state: 'started' }]) } as unknown as Settler;
  const placer = { placeOnce: async () => (state.pulls++, [{ job: 'files-a-p', op: 'p', server: 'a', state: 'placed', to: 'mods/x.jar' }]) } as unknown as PullPlacer;
  const app = createApp({ logger, token: () => TOKEN }, settleRoutes({ logger, settler, placer } as unknown as Deps));
  return { app, state };
}
const event = (type: string, data: unknown, headers: Record<string, string> = {}) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', 'ce-specversion': '1.0', 'ce-id': crypto.randomUUID(), 'ce-source': 'https://10.96.0.1:443', 'ce-type': type, ...headers },
  body: JSON.stringify(data),
});
const job = (labels: Record<string, string>) => ({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j', namespace: 'minecraft', labels }, status: { succeeded: 1 } });

test('a PingSource tick runs one settle pass, chains and pulls, with no token, as a source cannot send one', async () => {
  const { app, state } = appCounting();
  const r = await app.request('/', event('dev.knative.sources.ping', {}, { 'ce-source': '/apis/v1/namespaces/minecraft/pingsources/felis-settle' }));
  assert.equal(r.status, 200);
  assert.deepEqual(await r.json(), { chains: [{ job: 'snap-a', server: 'a', state: 'started' }], pulls: [{ job: 'files-a-p', op: 'p', server: 'a', state: 'placed', to: 'mods/x.jar' }] });
  assert.deepEqual(state, { passes: 1, pulls: 1 });
});

test('an ApiServerSource change of a pull Job places pulls, and settles no chain', async () => {
  const { app, state } = appCounting();
  const r = await app.request(
    '/',
    event('dev.knative.apiserver.resource.update', job({ 'app.kubernetes.io/managed-by': 'felis-files', 'felis.lolicon.best/files-pull': 'true', 'felis.lolicon.best/files-mode': 'read' })),
  );
  assert.equal(r.status, 200);
  assert.deepEqual(await r.json(), { pulls: [{ job: 'files-a-p', op: 'p', server: 'a', state: 'placed', to: 'mods/x.jar' }] });
  assert.deepEqual(state, { passes: 0, pulls: 1 });
  // A backup Job's change settles chains only.
  const b = await app.request('/', event('dev.knative.apiserver.resource.update', job({ 'app.kubernetes.io/managed-by': 'felis-backup' })));
  assert.deepEqual(Object.keys((await b.json()) as object), ['chains']);
  assert.deepEqual(state, { passes: 1, pulls: 1 });
});

test('an ApiServerSource change of a backup Job runs a pass; of any other Job it is skipped without one', async () => {
  const { app, state } = appCounting();
  const backup = await app.request('/', event('dev.knative.apiserver.resource.update', job({ 'app.kubernetes.io/managed-by': 'felis-backup' })));
  assert.equal(backup.status, 200);
  assert.equal(state.passes, 1);
  const fileJob = await app.request('/', event('dev.knative.apiserver.resource.update', job({ 'app.kubernetes.io/managed-by': 'felis-files' })));
  assert.equal(fileJob.status, 200);
  assert.equal(((await fileJob.json()) as { skipped: boolean }).skipped, true);
  const unlabelled = await app.request('/', event('dev.knative.apiserver.resource.add', { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'x' } }));
  assert.equal(unlabelled.status, 200);
  assert.equal(state.passes, 1);
  // Reference mode names the Job only, so any Job change costs a pass.
  const ref = await app.request('/', event('dev.knative.apiserver.ref.delete', { apiVersion: 'batch/v1', kind: 'Job', name: 'j', namespace: 'minecraft' }));
  assert.equal(ref.status, 200);
  assert.equal(state.passes, 2);
  const pod = await app.request('/', event('dev.knative.apiserver.ref.update', { apiVersion: 'v1', kind: 'Pod', name: 'p', namespace: 'minecraft' }));
  assert.equal(pod.status, 200);
  assert.equal(state.passes, 2);
});

test('our own settle event type goes through the route and so needs the token', async () => {
  const { app, state } = appCounting();
  const none = await app.request('/', event('dev.felis.restore.settle', {}));
  assert.equal(none.status, 401);
  assert.equal(state.passes, 0);
  const ok = await app.request('/', event('dev.felis.restore.settle', {}, { authorization: `Bearer ${TOKEN}` }));
  assert.equal(ok.status, 200);
  assert.equal(state.passes, 1);
});

test('a failed pass is a 500 so the source retries it', async () => {
  const logger = createLogger('t', { LOG_LEVEL: 'silent' });
  const settler = { settleOnce: async () => Promise.reject(new Error('list jobs: connection refused')) } as unknown as Settler;
  const app = createApp({ logger, token: () => TOKEN }, settleRoutes({ logger, settler } as unknown as Deps));
  const r = await app.request('/', event('dev.knative.sources.ping', {}));
  assert.equal(r.status, 500);
});
