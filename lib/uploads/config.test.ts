import assert from 'node:assert/strict';
import { test } from 'node:test';
import { uploadConfigFromEnv } from './config.ts';

test('upload sessions: 30 min idle and 6 h receiver lifetime by default; out-of-range values are refused', () => {
  assert.deepEqual(uploadConfigFromEnv({}), { idleSeconds: 1800, lifetimeSeconds: 21600, bodyIdleSeconds: 30, urlSeconds: 600 });
  assert.deepEqual(uploadConfigFromEnv({ FELIS_UPLOAD_IDLE_SECONDS: '60', FELIS_UPLOAD_LIFETIME_SECONDS: '600' }), { idleSeconds: 60, lifetimeSeconds: 600, bodyIdleSeconds: 30, urlSeconds: 600 });
  assert.throws(() => uploadConfigFromEnv({ FELIS_UPLOAD_IDLE_SECONDS: '0' }), /FELIS_UPLOAD_IDLE_SECONDS/);
  assert.throws(() => uploadConfigFromEnv({ FELIS_UPLOAD_LIFETIME_SECONDS: 'soon' }), /FELIS_UPLOAD_LIFETIME_SECONDS/);
  // An upload URL is valid at most 15 minutes.
  assert.equal(uploadConfigFromEnv({ FELIS_UPLOAD_URL_SECONDS: '900' }).urlSeconds, 900);
  assert.throws(() => uploadConfigFromEnv({ FELIS_UPLOAD_URL_SECONDS: '901' }), /FELIS_UPLOAD_URL_SECONDS/);
});
