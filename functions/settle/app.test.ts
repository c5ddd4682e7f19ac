import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createApp } from '../../lib/http/app.ts';
import type { Deps } from '../../lib/http/deps.ts';
import { createLogger } from '../../lib/log.ts';
import type { SettledChain, Settler } from '../../lib/maintenance/settle.ts';
import { settleRoutes } from './app.ts';

const TOKEN = 'token-0123456789';
const appWith = (chains: SettledChain[] | Error) => {
  const logger = createLogger('t', { LOG_LEVEL: 'silent' });
  const settler = { settleOnce: async () => (chains instanceof Error ? Promise.reject(chains) : chains) } as unknown as Settler;
  const deps = { logger, settler } as unknown as Deps;
  return createApp({ logger, token: () => TOKEN }, settleRoutes(deps));
};
const post = (app: ReturnType<typeof appWith>, auth = `Bearer ${TOKEN}`) => app.request('/api/v1/restore-chains/settle', { method: 'POST', headers: { authorization: auth } });

test('a settle pass answers each chain with its state, the reason and its text; a chain left pending says it is retried, never why', async () => {
  const r = await post(
    appWith([
      { job: 'b1', server: 'survival', state: 'started' },
      { job: 'b2', server: 'creative', state: 'abandoned', reason: 'restore_busy' },
      { job: 'b3', server: 'hub', state: 'pending', error: 'kubernetes 500 InternalError: etcd at 10.0.0.7 timed out' },
    ]),
  );
  assert.equal(r.status, 200);
  const body = (await r.json()) as { chains: Record<string, string>[]; pulls: unknown[] };
  assert.deepEqual(body.pulls, [], 'the route also places pulls: none here');
  assert.deepEqual(body.chains[0], { job: 'b1', server: 'survival', state: 'started' });
  assert.deepEqual(body.chains[1], { job: 'b2', server: 'creative', state: 'abandoned', reason: 'restore_busy', message: 'another restore is running on this world' });
  assert.equal(body.chains[2]!.state, 'pending');
  assert.equal(body.chains[2]!.error, 'the restore could not be started; it is retried on the next pass');
  assert.doesNotMatch(JSON.stringify(body), /etcd|10\.0\.0\.7/);
});

test('a settle pass that cannot list the chains is a 500 in the envelope; no token is a 401', async () => {
  const failed = await post(appWith(new Error('list jobs: connection refused')));
  assert.equal(failed.status, 500);
  const e = (await failed.json()) as { error: { code: string; message: string } };
  assert.equal(e.error.code, 'internal');
  assert.doesNotMatch(e.error.message, /connection refused/);
  assert.equal((await post(appWith([]), 'Bearer wrong-token-000000')).status, 401);
});
