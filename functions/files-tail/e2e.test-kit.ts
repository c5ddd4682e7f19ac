/** files-tail's end-to-end scenarios, `rbac` and `container` (test/support/function-e2e.ts says what each is for). @module */

import assert from 'node:assert/strict';
import { type ContainerCall, q, type RbacScenario } from '../../test/support/function-e2e.ts';

// A read: its one-shot Job, on a file the seeded world has; then a follow of it (its Jobs counted,
// its Pod found and called with the job key's token; the suite reads its first event, then hangs up).
export const rbac: RbacScenario = {
  calls: [
    ['GET', `/api/v1/servers/survival/files/tail?path=${q('eula.txt')}&lines=2`],
    ['GET', `/api/v1/servers/survival/files/tail?path=${q('eula.txt')}&lines=1&follow=true`],
  ],
};

export const container: ContainerCall[] = [
  {
    method: 'GET',
    path: `/api/v1/servers/survival/files/tail?path=${q('eula.txt')}&lines=5`,
    status: [200],
    check: (b) => assert.ok(b.lines.some((l: string) => /eula/.test(l)) && b.size > 0, JSON.stringify(b)),
  },
];
