import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import { callableAddress, containerTermination, controllerJob, describeTermination, jobFinished, jobOutcome } from './job-facts.ts';

const job = (...conditions: { type: string; status: string }[]): V1Job => ({ status: { conditions } });

test('a Job with no True terminal condition is running and not finished', () => {
  for (const j of [job(), job({ type: 'Complete', status: 'False' }), job({ type: 'Suspended', status: 'True' }), {}]) {
    assert.equal(jobOutcome(j), 'running');
    assert.equal(jobFinished(j), false);
  }
});

test('Complete or SuccessCriteriaMet decides success; Failed or FailureTarget decides failure', () => {
  assert.equal(jobOutcome(job({ type: 'SuccessCriteriaMet', status: 'True' })), 'succeeded');
  assert.equal(jobOutcome(job({ type: 'Complete', status: 'True' })), 'succeeded');
  assert.equal(jobOutcome(job({ type: 'FailureTarget', status: 'True' })), 'failed');
  assert.equal(jobOutcome(job({ type: 'Failed', status: 'True' })), 'failed');
  assert.equal(jobFinished(job({ type: 'FailureTarget', status: 'True' })), true);
  // A False success condition before a True failure one: the True one decides.
  assert.equal(jobOutcome(job({ type: 'Complete', status: 'False' }, { type: 'Failed', status: 'True' })), 'failed');
});

test('a container termination is found by container name and described with exit code, signal and reason', () => {
  const pod: V1Pod = {
    status: {
      containerStatuses: [
        { name: 'side', image: 'x', imageID: '', ready: false, restartCount: 0, state: { running: {} } },
        { name: 'files', image: 'x', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode: 137, reason: 'OOMKilled' } } },
      ],
    },
  };
  assert.equal(containerTermination(pod, 'side'), undefined);
  const t = containerTermination(pod, 'files');
  assert.equal(t?.exitCode, 137);
  assert.equal(describeTermination(t), 'exit 137, (signal 9), reason OOMKilled');
  assert.equal(describeTermination({ exitCode: 1, signal: 15 }), 'exit 1, signal 15');
  assert.equal(describeTermination(undefined), 'the container has not terminated');
});

test('a Pod can take a call only while Running with the container started and an address', () => {
  const pod = (phase: string, state: object, podIP?: string) => ({ status: { phase, podIP, containerStatuses: [{ name: 'files', state }] } }) as unknown as V1Pod;
  assert.equal(callableAddress(pod('Running', { running: {} }, '127.1.0.5'), 'files'), '127.1.0.5');
  assert.equal(callableAddress(pod('Running', { running: {} }), 'files'), undefined, 'no address yet');
  assert.equal(callableAddress(pod('Running', { waiting: {} }, '127.1.0.5'), 'files'), undefined, 'container not started');
  assert.equal(callableAddress(pod('Running', { running: {} }, '127.1.0.5'), 'other'), undefined, 'another container');
  assert.equal(callableAddress(pod('Succeeded', { running: {} }, '127.1.0.5'), 'files'), undefined);
});

test('the controlling Job of a Pod is the owner marked controller, not another owner', () => {
  const owned = (refs: object[]) => ({ metadata: { ownerReferences: refs } }) as unknown as V1Pod;
  assert.equal(
    controllerJob(
      owned([
        { kind: 'Job', name: 'a', controller: false },
        { kind: 'Job', name: 'b', controller: true },
      ]),
    ),
    'b',
  );
  assert.equal(controllerJob(owned([{ kind: 'ReplicaSet', name: 'r', controller: true }])), undefined);
  assert.equal(controllerJob(owned([])), undefined);
});
