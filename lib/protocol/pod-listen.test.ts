import assert from 'node:assert/strict';
import { test } from 'node:test';
import { connectRetryMs, untilAnswers } from './pod-listen.ts';

test('a Pod program is asked again every 10 ms for the first second after a refusal, then every 50 ms', () => {
  assert.equal(connectRetryMs(0), 10);
  assert.equal(connectRetryMs(999), 10);
  assert.equal(connectRetryMs(1_000), 50);
  assert.equal(connectRetryMs(60_000), 50);
});

test('a program that answers on the third ask is reported ready after three asks', async () => {
  let asked = 0;
  assert.equal(await untilAnswers(async () => ++asked === 3, 1_000, performance.now() + 10_000), true);
  assert.equal(asked, 3);
});

test('a program that never answers is given up after the limit, or sooner at the deadline', async () => {
  let asked = 0;
  let t = performance.now();
  assert.equal(await untilAnswers(async () => (asked++, false), 150, t + 10_000), false);
  let took = performance.now() - t;
  assert.ok(asked > 1, `asked ${asked} times`);
  assert.ok(took >= 100 && took < 1_000, `gave up after ${took} ms for a limit of 150`);
  t = performance.now();
  assert.equal(await untilAnswers(async () => false, 10_000, t + 100), false);
  took = performance.now() - t;
  assert.ok(took < 1_000, `gave up after ${took} ms for a deadline 100 ms away`);
});

test('a caller that goes away stops the asking with its reason', async () => {
  const ac = new AbortController();
  setTimeout(() => ac.abort(new Error('caller gone')), 50);
  await assert.rejects(
    untilAnswers(async () => false, 10_000, performance.now() + 10_000, ac.signal),
    /caller gone/,
  );
});
