/** files-list's end-to-end scenarios, `rbac` and `container` (test/support/function-e2e.ts says what each is for). @module */

import assert from 'node:assert/strict';
import { type ContainerCall, endSessions, type RbacCall, type RbacScenario } from '../../test/support/function-e2e.ts';

// With browse sessions on (and no session up to begin with): the first request starts one and
// runs its one-shot Job, the later ones may be answered by the session.
export const rbac: RbacScenario = { setup: endSessions, calls: [1, 2, 3].map((): RbacCall => ['GET', '/api/v1/servers/survival/files']) };

export const container: ContainerCall[] = [
  {
    method: 'GET',
    path: '/api/v1/servers/survival/files',
    status: [200],
    check: (b) =>
      assert.ok(
        b.entries.some((e: { name: string }) => e.name === 'eula.txt'),
        JSON.stringify(b),
      ),
  },
];
