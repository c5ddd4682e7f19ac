import assert from 'node:assert/strict';
import { test } from 'node:test';
import { authConfigFromEnv } from './config.ts';

test('token mode is the default; kubernetes mode takes an audience, TTLs and a cache size', () => {
  assert.deepEqual(authConfigFromEnv({}), {
    mode: 'token',
    audience: 'felis-world',
    eventAudience: 'felis-world',
    namespace: 'minecraft',
    allowTtlMs: 10_000,
    denyTtlMs: 5_000,
    cacheSize: 4096,
  });
  const c = authConfigFromEnv({
    FELIS_AUTH_MODE: 'kubernetes',
    FELIS_AUTH_AUDIENCE: 'games',
    FELIS_AUTH_EVENT_AUDIENCE: 'serving.knative.dev/service/minecraft/settle',
    FELIS_NAMESPACE: 'mc',
    FELIS_AUTH_ALLOW_TTL_SECONDS: '2.5',
    FELIS_AUTH_DENY_TTL_SECONDS: '0',
    FELIS_AUTH_CACHE_SIZE: '10',
  });
  assert.deepEqual(c, { mode: 'kubernetes', audience: 'games', eventAudience: 'serving.knative.dev/service/minecraft/settle', namespace: 'mc', allowTtlMs: 2500, denyTtlMs: 0, cacheSize: 10 });
  // The event audience follows the callers' one unless set.
  assert.equal(authConfigFromEnv({ FELIS_AUTH_AUDIENCE: 'games' }).eventAudience, 'games');
});

test('a mistake in the auth settings stops the start, naming the variable', () => {
  assert.throws(() => authConfigFromEnv({ FELIS_AUTH_MODE: 'oidc' }), /FELIS_AUTH_MODE/);
  assert.throws(() => authConfigFromEnv({ FELIS_AUTH_ALLOW_TTL_SECONDS: '-1' }), /FELIS_AUTH_ALLOW_TTL_SECONDS/);
  assert.throws(() => authConfigFromEnv({ FELIS_AUTH_CACHE_SIZE: '0' }), /FELIS_AUTH_CACHE_SIZE/);
});
