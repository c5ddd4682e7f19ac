/** files-trash's end-to-end scenarios, `rbac` and `container` (test/support/function-e2e.ts says what each is for). @module */

import assert from 'node:assert/strict';
import { type ContainerCall, interruptedExtraction, type Place, type RbacScenario } from '../../test/support/function-e2e.ts';

// The undo trash: its listing (a read-only Job), then a purge of everything (a sync mutation under
// the lock, which first recovers an interrupted extraction and records it). Needs the Job side of
// the trash (job/trash/).
export const rbac: RbacScenario = {
  setup: interruptedExtraction,
  calls: [
    ['GET', '/api/v1/servers/survival/files/trash'],
    ['DELETE', '/api/v1/servers/survival/files/trash'],
  ],
};

export const container: ContainerCall[] = [
  { method: 'GET', path: '/api/v1/servers/survival/files/trash', status: [200], check: (b) => assert.ok(b.items.length >= 1, `what the deletes before moved aside: ${JSON.stringify(b)}`) },
];

/** It lists what their deletes moved aside. */
export const containerOrder: Place = { after: ['files-batch', 'files-delete'] };
