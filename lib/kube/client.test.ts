import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadClientNode, once } from './client.ts';

test('once runs its maker a single time however many callers ask at the same moment', async () => {
  let made = 0;
  const get = once(async () => ++made);
  const all = await Promise.all([get(), get(), get()]);
  assert.deepEqual(all, [1, 1, 1]);
  assert.equal(await get(), 1);
  assert.equal(made, 1);
});

test('once tries again after a failure instead of keeping it', async () => {
  let calls = 0;
  const get = once(async () => {
    calls++;
    if (calls === 1) throw new Error('first load failed');
    return 'loaded';
  });
  await assert.rejects(get(), /first load failed/);
  assert.equal(await get(), 'loaded');
  assert.equal(calls, 2);
});

test('the on-demand client is the same module every time, with the classes the functions use', async () => {
  const a = await loadClientNode();
  assert.equal(await loadClientNode(), a);
  for (const name of ['KubeConfig', 'BatchV1Api', 'CoreV1Api', 'CustomObjectsApi', 'RequestContext', 'setHeaderOptions', 'request'] as const) {
    assert.equal(typeof a[name], 'function', name);
  }
});
