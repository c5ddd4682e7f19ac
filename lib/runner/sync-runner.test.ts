import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import type { JobPodApi, LogOpening } from '../kube/job-pods.ts';
import { FILES_CONTAINER, LABEL_FILES_OP } from '../labels.ts';
import { RESULT_PREFIX } from '../protocol/result.ts';
import type { PollSchedule } from './poll-schedule.ts';
import { FilesTimeoutError, JobLostError, SyncRunner } from './sync-runner.ts';

const JOB: V1Job = { metadata: { name: 'files-survival-1', namespace: 'minecraft', labels: { [LABEL_FILES_OP]: 'op1' } } };
const RESULT = `${RESULT_PREFIX}{"sha256":"abc"}\n`;

/** A cluster whose Job controller never sets a terminal condition; the container state is the test's. */
class LaggingCluster implements JobPodApi {
  terminated = true;
  log = RESULT;
  jobLists = 0;
  async createJob() {}
  async listJobs(): Promise<V1Job[]> {
    this.jobLists++;
    return [{ ...JOB, status: { active: 1 } }];
  }
  async listPods(): Promise<V1Pod[]> {
    const state = this.terminated ? { terminated: { exitCode: 0, reason: 'Completed' } } : { running: {} };
    return [
      {
        metadata: { name: 'files-survival-1-abcde' },
        spec: { nodeName: 'n', containers: [] },
        status: { phase: 'Running', containerStatuses: [{ name: FILES_CONTAINER, image: 'i', imageID: '', ready: false, restartCount: 0, state }] },
      },
    ];
  }
  async openLog(): Promise<LogOpening> {
    const body = Readable.from([Buffer.from(this.log)]);
    return { kind: 'stream', body, close: () => body.destroy() };
  }
}

test('a mutation whose container terminated after its result is answered after the grace even though its Job never finishes', async () => {
  const api = new LaggingCluster();
  const t = performance.now();
  const payload = await new SyncRunner(api, { finishGraceMs: 300 }).run(JOB, { mutating: true, signal: AbortSignal.timeout(5000) });
  const took = performance.now() - t;
  assert.equal(payload, '{"sha256":"abc"}');
  assert.ok(took >= 300 && took < 1500, `answered after ${Math.round(took)} ms`);
  assert.ok(api.jobLists >= 2, 'the Job condition was looked for first');
});

test('while the container has not terminated, a mutation keeps waiting for its Job (to the deadline)', async () => {
  const api = new LaggingCluster();
  api.terminated = false;
  await assert.rejects(new SyncRunner(api, { finishGraceMs: 100 }).run(JOB, { mutating: true, signal: AbortSignal.timeout(800) }), FilesTimeoutError);
});

test('a read returns on its result without waiting for the Job at all', async () => {
  const api = new LaggingCluster();
  assert.equal(await new SyncRunner(api, { finishGraceMs: 60_000 }).run(JOB, { mutating: false, signal: AbortSignal.timeout(2000) }), '{"sha256":"abc"}');
  assert.equal(api.jobLists, 0);
});

test('a mutation whose Pod vanished before its result tells the caller the change is all or nothing', async () => {
  const api = new LaggingCluster();
  api.log = 'no result here\n';
  // The Pod is there when first looked for; once its log has ended without a result, it is gone.
  const first = api.listPods.bind(api);
  let looks = 0;
  api.listPods = async () => (looks++ === 0 ? first() : []);
  const err = await new SyncRunner(api).run(JOB, { mutating: true, signal: AbortSignal.timeout(2000) }).catch((e: unknown) => e);
  assert.ok(err instanceof JobLostError, String(err));
  assert.match(err.callerMessage, /either not made or fully made \(writes are atomic\)/);
  assert.match(err.message, /vanished before its result/);
});

/** A schedule that records what the runner tells it. */
function recordingSchedule(first: number) {
  const seen: [number, number][] = [];
  const schedule: PollSchedule = { firstLook: () => first, next: () => 20, observeStart: (a, b) => void seen.push([a, b]) };
  return { schedule, seen };
}

test('the Pod is not listed before the first look, and the start the log finds is taught to the schedule', async () => {
  const api = new LaggingCluster();
  api.terminated = false;
  let created = 0;
  let firstList = 0;
  let waits = 2;
  api.createJob = async () => void (created = performance.now());
  // Listed as being created, so the log is the poll: two "waiting to start", then the stream.
  const list = api.listPods.bind(api);
  api.listPods = async () => {
    firstList ||= performance.now();
    const pods = await list();
    pods[0]!.status!.containerStatuses![0]!.state = { waiting: { reason: 'ContainerCreating' } };
    return pods;
  };
  const open = api.openLog.bind(api);
  api.openLog = async () => (waits-- > 0 ? { kind: 'waiting' } : open());
  const { schedule, seen } = recordingSchedule(150);
  assert.equal(await new SyncRunner(api, { schedule }).run(JOB, { mutating: false, signal: AbortSignal.timeout(2000) }), '{"sha256":"abc"}');
  assert.ok(firstList - created >= 140, `listed ${Math.round(firstList - created)} ms after the create`);
  assert.equal(seen.length, 1);
  const [notBefore, by] = seen[0]!;
  assert.ok(notBefore >= 150 && by > notBefore, `taught ${notBefore}..${by}`);
});

test('an adopted Job is looked for at once and teaches the schedule nothing', async () => {
  const api = new LaggingCluster();
  api.terminated = false;
  const { schedule, seen } = recordingSchedule(5000);
  const t = performance.now();
  assert.equal(await new SyncRunner(api, { schedule }).run(JOB, { mutating: false, adopt: true, signal: AbortSignal.timeout(2000) }), '{"sha256":"abc"}');
  assert.ok(performance.now() - t < 1000);
  assert.equal(seen.length, 0);
});

test('a mutation whose Pod is already Succeeded when first listed still answers only once its Job is finished', async () => {
  let jobLists = 0;
  const api: JobPodApi = {
    async createJob() {},
    async listJobs() {
      jobLists++;
      // The controller marks the Job complete on the third look.
      return [{ ...JOB, status: jobLists >= 3 ? { succeeded: 1, conditions: [{ type: 'Complete', status: 'True' }] } : { active: 1 } }];
    },
    async listPods() {
      return [
        {
          metadata: { name: 'files-survival-1-abcde', labels: { [LABEL_FILES_OP]: 'op1' } },
          spec: { nodeName: 'n', containers: [] },
          status: {
            phase: 'Succeeded',
            containerStatuses: [{ name: FILES_CONTAINER, image: 'i', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode: 0, reason: 'Completed' } } }],
          },
        },
      ];
    },
    async openLog() {
      const body = Readable.from([Buffer.from(RESULT)]);
      return { kind: 'stream', body, close: () => body.destroy() };
    },
  } as unknown as JobPodApi;
  const schedule: PollSchedule = { firstLook: () => 0, next: () => 10, observeStart: () => {} };
  const payload = await new SyncRunner(api, { schedule, finishGraceMs: 60_000 }).run(JOB, { mutating: true, signal: AbortSignal.timeout(5000) });
  assert.equal(payload, '{"sha256":"abc"}');
  assert.ok(jobLists >= 3, `the Job was looked at until finished (${jobLists} looks)`);
});
