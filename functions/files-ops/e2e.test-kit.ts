/** files-ops's end-to-end scenarios, `rbac` and `container` (test/support/function-e2e.ts says what each is for). @module */

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { ClusterHarness } from '../../cluster/harness.ts';
import { backgroundOpsEnded, type ContainerCall, type Place, type RbacScenario } from '../../test/support/function-e2e.ts';
import { createJob } from '../../test/support/servers.ts';

/** An ended background op of survival's (a Job whose Pod printed its result), so that one op can be asked for by its id. */
async function anEndedOp(c: ClusterHarness): Promise<void> {
  await backgroundOpsEnded(c);
  const id = randomBytes(8).toString('hex');
  const labels = {
    'app.kubernetes.io/managed-by': 'felis-files',
    'felis.lolicon.best/server': 'survival',
    'felis.lolicon.best/files-op': id,
    // Holds nothing while it runs.
    'felis.lolicon.best/files-mode': 'read',
    'felis.lolicon.best/files-read-op': 'usage',
    'felis.lolicon.best/files-async': 'true',
  };
  await createJob(c, {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: `files-survival-${id}`, namespace: 'minecraft', labels, annotations: { 'felis.lolicon.best/files-path': '' } },
    spec: {
      backoffLimit: 0,
      template: { metadata: { labels }, spec: { restartPolicy: 'Never', containers: [{ name: 'files', image: 'felis-test/none', command: ['sh', '-c', `echo 'FELIS-FILES-RESULT: {}'`] }] } },
    },
  });
  await backgroundOpsEnded(c);
}

export const rbac: RbacScenario = {
  setup: anEndedOp,
  calls: [
    ['GET', '/api/v1/servers/survival/files/ops?limit=1'],
    ['GET', (v) => `/api/v1/servers/survival/files/ops/${v.ops[0].id}`],
  ],
};

export const container: ContainerCall[] = [
  { method: 'GET', path: '/api/v1/servers/survival/files/ops', status: [200], check: (b) => assert.ok(b.ops.length >= 3, JSON.stringify(b)) },
  { method: 'GET', path: '/api/v1/servers/survival/files/ops?limit=1', status: [200], check: (b) => assert.ok(b.ops.length === 1 && b.next === b.ops[0].id, JSON.stringify(b)) },
  { method: 'GET', path: (v) => `/api/v1/servers/survival/files/ops/${v.next}`, status: [200], check: (b) => assert.equal(typeof b.op.state, 'string', JSON.stringify(b)) },
];

/** It lists their background ops. */
export const containerOrder: Place = { after: ['files-zip', 'files-unzip', 'files-compress', 'files-pull'] };
