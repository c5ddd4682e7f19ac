import assert from 'node:assert/strict';
import { test } from 'node:test';
import { StopGate } from './stop.ts';

test('a stop ends the Job at once only while an op stages, after its cleanup; otherwise it waits for the result', () => {
  const said: string[] = [];
  const gate = new StopGate((m) => said.push(m));
  gate.request();
  assert.deepEqual([...said], [], 'no op staging: the op (one synchronous step) ends and prints its result');

  const staged = new StopGate((m) => said.push(`exit: ${m}`));
  staged.staging(() => said.push('cleanup'));
  staged.request();
  staged.request();
  assert.deepEqual([...said], ['cleanup', 'exit: stopped by a signal before anything was placed; nothing was changed']);

  said.length = 0;
  const placing = new StopGate((m) => said.push(m));
  placing.staging(() => said.push('cleanup'));
  placing.settled();
  placing.request();
  assert.deepEqual([...said], [], 'placing: the signal waits');
  assert.equal(placing.requested, true);

  const failing = new StopGate((m) => said.push(m));
  failing.staging(() => {
    throw new Error('rm failed');
  });
  failing.request();
  assert.deepEqual([...said], ['stopped by a signal before anything was placed; nothing was changed'], 'a failed cleanup is left to the next Job');
});
