import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { END_MARGIN_MS, type SessionWant, servingPods, startingPod } from './pods.ts';

const NOW = Date.parse('2026-12-01T06:00:00Z');
const want: SessionWant = { claim: 'world-s-0', node: 'n1', image: 'img:1', lifetimeSeconds: 100 };

function pod(name: string, o: { phase?: string; ip?: string; agoMs?: number; node?: string; running?: boolean; deleting?: boolean; owner?: boolean } = {}): V1Pod {
  const at = new Date(NOW - (o.agoMs ?? 1000));
  return {
    metadata: {
      name,
      creationTimestamp: at,
      ...(o.deleting ? { deletionTimestamp: new Date(NOW) } : {}),
      ...(o.owner === false ? {} : { ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: `job-${name}`, uid: 'u', controller: true }] }),
    },
    spec: {
      nodeSelector: { 'felis.node-restriction.kubernetes.io/identity': o.node ?? 'n1' },
      volumes: [{ name: 'world', persistentVolumeClaim: { claimName: 'world-s-0' } }],
      containers: [{ name: 'files', image: 'img:1' }],
    },
    status: {
      phase: o.phase ?? 'Running',
      podIP: o.ip,
      startTime: at,
      containerStatuses: [{ name: 'files', image: '', imageID: '', ready: true, restartCount: 0, state: o.running === false ? { waiting: {} } : { running: {} } }],
    },
  };
}

test('serving: running with an address, on the same node, not being deleted, owned by a Job, with life left; oldest first', () => {
  const pods = [
    pod('young', { ip: '127.1.0.2', agoMs: 1000 }),
    pod('old', { ip: '127.1.0.3', agoMs: 5000 }),
    pod('no-ip'),
    pod('other-node', { ip: '127.1.0.4', node: 'n2' }),
    pod('deleting', { ip: '127.1.0.5', deleting: true }),
    pod('orphan', { ip: '127.1.0.6', owner: false }),
    pod('waiting', { ip: '127.1.0.7', running: false }),
    pod('done', { ip: '127.1.0.8', phase: 'Succeeded' }),
    pod('ending', { ip: '127.1.0.9', agoMs: 100_000 - END_MARGIN_MS + 1 }),
  ];
  assert.deepEqual(
    servingPods(pods, want, NOW).map((s) => [s.pod, s.job, s.ip]),
    [
      ['old', 'job-old', '127.1.0.3'],
      ['young', 'job-young', '127.1.0.2'],
    ],
  );
});

test('starting: the youngest matching Pod not finished, with its age; none when all are finished or foreign', () => {
  assert.equal(startingPod([pod('done', { phase: 'Failed' }), pod('other', { phase: 'Pending', node: 'n2' })], want, NOW), undefined);
  assert.deepEqual(startingPod([pod('a', { phase: 'Pending', agoMs: 9000 }), pod('b', { phase: 'Pending', agoMs: 2000 })], want, NOW), { ageMs: 2000 });
  assert.deepEqual(startingPod([pod('up', { agoMs: 300 })], want, NOW), { ageMs: 300 }, 'running without an address yet');
  assert.equal(startingPod([pod('ending', { agoMs: 100_000 })], want, NOW), undefined, 'a Pod at the end of its life is not worth waiting for');
});
