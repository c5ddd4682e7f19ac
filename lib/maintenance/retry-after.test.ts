import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GRACE_MS } from '../protocol/lock-value.ts';
import { RETRY_CONTENDED_SECONDS, RETRY_FILE_CHANGE_SECONDS, RETRY_OTHER_SECONDS, retryAfterSeconds } from './retry-after.ts';

const NOW = new Date('2026-12-01T10:00:00Z');
const ago = (ms: number) => new Date(NOW.getTime() - ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

test('a Job holder: seconds for a file change, longer for anything else', () => {
  assert.equal(retryAfterSeconds({ kind: 'file-write', source: 'job', since: ago(1_000) }, NOW), RETRY_FILE_CHANGE_SECONDS);
  assert.equal(retryAfterSeconds({ kind: 'config-write', source: 'job' }, NOW), RETRY_FILE_CHANGE_SECONDS);
  for (const kind of ['backup', 'restore', 'export', 'reap', 'something-new']) assert.equal(retryAfterSeconds({ kind, source: 'job', since: ago(GRACE_MS * 10) }, NOW), RETRY_OTHER_SECONDS, kind);
  assert.equal(retryAfterSeconds(undefined, NOW), RETRY_OTHER_SECONDS);
  assert.equal(retryAfterSeconds(undefined, NOW, { contended: true }), RETRY_CONTENDED_SECONDS);
});

test('a lock holder: never later than it lapses, at its Grace (2 minutes) after its date; at least 1 s', () => {
  // A file-write lock 118 s old lapses in 2 s; one 10 s old is still a file change's few seconds.
  assert.equal(retryAfterSeconds({ kind: 'file-write', source: 'lock', since: ago(GRACE_MS - 2_000) }, NOW), 2);
  assert.equal(retryAfterSeconds({ kind: 'file-write', source: 'lock', since: ago(10_000) }, NOW), RETRY_FILE_CHANGE_SECONDS);
  // A backup lock 100 s old: 20 s left, sooner than the usual 30.
  assert.equal(retryAfterSeconds({ kind: 'backup', source: 'lock', since: ago(GRACE_MS - 20_000) }, NOW), 20);
  assert.equal(retryAfterSeconds({ kind: 'backup', source: 'lock', since: ago(1_000) }, NOW), RETRY_OTHER_SECONDS);
  // Within its last second, or dated ahead (skew): 1 s at least, the usual at most.
  assert.equal(retryAfterSeconds({ kind: 'restore', source: 'lock', since: ago(GRACE_MS - 100) }, NOW), 1);
  assert.equal(retryAfterSeconds({ kind: 'restore', source: 'lock', since: ago(-60_000) }, NOW), RETRY_OTHER_SECONDS);
  // A migration lock never lapses; a lock nobody can date says nothing.
  assert.equal(retryAfterSeconds({ kind: 'migration', source: 'lock', since: ago(GRACE_MS - 1_000) }, NOW), RETRY_OTHER_SECONDS);
  assert.equal(retryAfterSeconds({ kind: 'export', source: 'lock', since: 'soon' }, NOW), RETRY_OTHER_SECONDS);
});
