import { test } from 'node:test';
import assert from 'node:assert/strict';
import { stageAwareSchedule } from './poll-schedule.ts';

test('slow before binding; a later first look at a container being created, then tighter than 150 ms', () => {
  assert.equal(stageAwareSchedule.next('unscheduled', 0), 300);
  assert.equal(stageAwareSchedule.next('creating', 0), 200);
  assert.ok(stageAwareSchedule.next('creating', 200) < 150);
  assert.equal(stageAwareSchedule.next('creating', 5000), stageAwareSchedule.next('creating', 200));
  assert.equal(stageAwareSchedule.next('no-pod', 0), 50);
  assert.equal(stageAwareSchedule.next('no-pod', 500), 200);
});
