import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Job } from '@kubernetes/client-node';
import { waitJobsFinished } from './job-wait.ts';

const job = (finished: boolean): V1Job => ({ metadata: { name: 'j' }, status: finished ? { conditions: [{ type: 'Complete', status: 'True' }] } : {} });
const noWait = async () => {};

test('lists until every Job is finished, backing off between listings; a listing that failed is asked again', async () => {
  const answers: (V1Job[] | undefined)[] = [[job(false)], undefined, [job(false), job(true)], [job(true), job(true)]];
  const slept: number[] = [];
  const jobs = await waitJobsFinished({ list: async () => answers.shift(), sleep: async (ms) => void slept.push(ms) });
  assert.equal(jobs.length, 2);
  assert.deepEqual(slept, [20, 40, 80]);
});

test('no Job listed counts as finished', async () => {
  assert.deepEqual(await waitJobsFinished({ list: async () => [], sleep: noWait }), []);
});

test('past its end it answers the last listing that came through', async () => {
  let n = 0;
  const jobs = await waitJobsFinished({ list: async () => (n++ === 0 ? [job(false)] : undefined), endAt: performance.now() + 30, sleep: (ms) => new Promise((r) => setTimeout(r, ms)) });
  assert.equal(jobs.length, 1);
  assert.ok(n >= 2);
});

test('`enough` ends the wait early', async () => {
  let asked = 0;
  const jobs = await waitJobsFinished({ list: async () => [job(false)], enough: async () => ++asked === 2, sleep: noWait });
  assert.equal(asked, 2);
  assert.equal(jobs.length, 1);
});
