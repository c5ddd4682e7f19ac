import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MAX_PREFER_WAIT_SECONDS, preferWaitSeconds } from './prefer.ts';

test('wait=N is read from Prefer, case-insensitively, among other preferences and parameters', () => {
  assert.equal(preferWaitSeconds('wait=10'), 10);
  assert.equal(preferWaitSeconds('WAIT=7'), 7);
  assert.equal(preferWaitSeconds('respond-async, wait=5'), 5);
  assert.equal(preferWaitSeconds('handling=lenient; x=1, wait = 4 ;p'), 4);
  assert.equal(preferWaitSeconds('wait="12"'), 12);
  assert.equal(preferWaitSeconds('foo="a,wait=3", wait=9'), 9, 'a comma inside quotes splits nothing');
});

test('more than the most is honoured as the most', () => {
  assert.equal(MAX_PREFER_WAIT_SECONDS, 30);
  assert.equal(preferWaitSeconds('wait=31'), 30);
  assert.equal(preferWaitSeconds('wait=9999999999'), 30);
});

test('the first wait counts when given twice (two field lines arrive joined with a comma)', () => {
  assert.equal(preferWaitSeconds('wait=3, wait=20'), 3);
  assert.equal(preferWaitSeconds('wait=x, wait=20'), undefined, 'the first is the one, even malformed');
});

test('absent, zero or malformed is no waiting (ignored, never an error, as RFC 7240 asks)', () => {
  for (const h of [undefined, null, '', 'respond-async', 'wait', 'wait=', 'wait=-1', 'wait=1.5', 'wait=ten', 'wait=0', 'wait=" "', 'wait=12345678901', 'waiting=5', ',,,']) {
    assert.equal(preferWaitSeconds(h), undefined, String(h));
  }
});
