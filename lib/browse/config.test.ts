import assert from 'node:assert/strict';
import { test } from 'node:test';
import { configFromEnv } from '../config.ts';

test('browse sessions are on only with a key file; their settings have defaults and are checked at start', () => {
  assert.equal(configFromEnv({}).browse, undefined);
  assert.equal(configFromEnv({ FELIS_JOB_KEY_FILE: '' }).browse, undefined);
  assert.deepEqual(configFromEnv({ FELIS_JOB_KEY_FILE: '/k' }).browse, {
    keyFile: '/k',
    idleSeconds: 60,
    lifetimeSeconds: 540,
    startBudgetMs: 300,
    callTimeoutMs: 10_000,
    edits: true,
  });
  // Edit sessions come with the key unless turned off; a word other than on or off stops the start.
  assert.equal(configFromEnv({ FELIS_JOB_KEY_FILE: '/k', FELIS_EDIT_SESSIONS: 'off' }).browse!.edits, false);
  assert.throws(() => configFromEnv({ FELIS_JOB_KEY_FILE: '/k', FELIS_EDIT_SESSIONS: 'maybe' }), /FELIS_EDIT_SESSIONS/);
  assert.equal(configFromEnv({ FELIS_JOB_KEY_FILE: '/k', FELIS_BROWSE_START_BUDGET_MS: '0' }).browse!.startBudgetMs, 0);
  assert.throws(() => configFromEnv({ FELIS_JOB_KEY_FILE: '/k', FELIS_BROWSE_IDLE_SECONDS: '0' }), /FELIS_BROWSE_IDLE_SECONDS/);
  assert.throws(() => configFromEnv({ FELIS_BROWSE_LIFETIME_SECONDS: 'soon' }), /FELIS_BROWSE_LIFETIME_SECONDS/);
});
