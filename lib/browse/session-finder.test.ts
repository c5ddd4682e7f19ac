import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LISTEN_GRACE_MS, nextStep, STUCK_AFTER_MS } from './session-finder.ts';

const NOW = Date.parse('2026-12-01T06:00:00Z');
const serving = (upForMs: number) => ({ pod: 'p', job: 'j', ip: '127.1.0.9', startedMs: NOW - upForMs });

test('nothing serving or starting: a Job is started once per search, then waited for', () => {
  assert.equal(nextStep([], undefined, NOW, 'wait', false), 'start');
  assert.equal(nextStep([], undefined, NOW, 'leave', false), 'start');
  assert.equal(nextStep([], undefined, NOW, 'wait', true), 'wait');
});

test('never: only a Pod serving now answers, so a starting one is not waited for and none is started', () => {
  assert.equal(nextStep([], undefined, NOW, 'never', false), 'stop');
  assert.equal(nextStep([], { ageMs: 0 }, NOW, 'never', false), 'stop');
});

test('a starting Pod is waited for until it is stuck', () => {
  assert.equal(nextStep([], { ageMs: STUCK_AFTER_MS }, NOW, 'wait', false), 'wait');
  assert.equal(nextStep([], { ageMs: STUCK_AFTER_MS + 1 }, NOW, 'wait', false), 'stop');
  assert.equal(nextStep([], { ageMs: STUCK_AFTER_MS + 1 }, NOW, 'leave', false), 'stop');
});

test('serving Pods that did not answer: waited for while one may still be starting its program, not after', () => {
  assert.equal(nextStep([serving(LISTEN_GRACE_MS)], undefined, NOW, 'wait', false), 'wait');
  assert.equal(nextStep([serving(LISTEN_GRACE_MS + 1), serving(1000)], undefined, NOW, 'wait', false), 'wait');
  assert.equal(nextStep([serving(LISTEN_GRACE_MS + 1)], undefined, NOW, 'wait', false), 'stop');
  // Even a stuck starting Pod is no reason to give up while a serving one is young.
  assert.equal(nextStep([serving(1000)], { ageMs: STUCK_AFTER_MS + 1 }, NOW, 'leave', false), 'wait');
});
