/** files-usage's end-to-end scenarios, `rbac` and `container` (test/support/function-e2e.ts says what each is for). @module */

import assert from 'node:assert/strict';
import { type ContainerCall, q, type RbacScenario } from '../../test/support/function-e2e.ts';

// A read: its one-shot Job, on the whole world and on a folder.
export const rbac: RbacScenario = {
  calls: [
    ['GET', '/api/v1/servers/survival/files/usage?depth=2'],
    ['GET', `/api/v1/servers/survival/files/usage?path=${q('world')}&top=1`],
  ],
};

export const container: ContainerCall[] = [
  {
    method: 'GET',
    path: '/api/v1/servers/survival/files/usage?depth=2&top=3',
    status: [200],
    check: (b) => assert.ok(b.bytes > 0 && b.capacity_bytes > 0 && b.children.some((c: { name: string }) => c.name === 'world'), JSON.stringify(b)),
  },
];
