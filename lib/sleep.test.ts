import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sleep } from './sleep.ts';

test('sleep resolves after its time', async () => {
  const t0 = performance.now();
  await sleep(20);
  assert.ok(performance.now() - t0 >= 15);
});

test('an abort rejects with its reason, during the wait or before it', async () => {
  const during = new AbortController();
  const p = sleep(10_000, during.signal);
  during.abort(new Error('gone'));
  await assert.rejects(p, /gone/);
  const t0 = performance.now();
  await assert.rejects(sleep(10_000, AbortSignal.abort(new Error('already'))), /already/);
  assert.ok(performance.now() - t0 < 1_000);
});
