import { test } from 'node:test';
import assert from 'node:assert/strict';
import { stageAwareSchedule, fixedSchedule } from './poll-schedule.ts';

test('slow before binding, shrinking towards 100 ms while the container is created', () => {
  assert.equal(stageAwareSchedule.next('unscheduled', 0), 250);
  assert.equal(stageAwareSchedule.next('creating', 0), 300);
  assert.ok(stageAwareSchedule.next('creating', 500) < stageAwareSchedule.next('creating', 100));
  assert.equal(stageAwareSchedule.next('creating', 5000), 100);
  assert.equal(stageAwareSchedule.next('no-pod', 0), 50);
  assert.equal(fixedSchedule(150).next('creating', 9), 150);
});
