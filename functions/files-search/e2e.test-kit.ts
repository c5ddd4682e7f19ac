/** files-search's end-to-end scenarios, `rbac` and `container` (test/support/function-e2e.ts says what each is for). @module */

import assert from 'node:assert/strict';
import { type ContainerCall, endSessions, q, type RbacCall, type RbacScenario } from '../../test/support/function-e2e.ts';

// With browse sessions on (and no session up to begin with): the first request starts one and
// runs its one-shot Job, the later ones may be answered by the session.
export const rbac: RbacScenario = { setup: endSessions, calls: [1, 2, 3].map((): RbacCall => ['GET', `/api/v1/servers/survival/files/search?q=${q('*.txt')}`]) };

export const container: ContainerCall[] = [
  { method: 'GET', path: `/api/v1/servers/survival/files/search?q=${q('*.txt')}`, status: [200], check: (b) => assert.ok(JSON.stringify(b).includes('eula.txt'), JSON.stringify(b)) },
  // A content search in the image: server.properties is found by its redacted text, never by its value.
  {
    method: 'GET',
    path: `/api/v1/servers/survival/files/search?content=${q('<redacted by felis>')}`,
    status: [200],
    check: (b) => assert.ok(/"path":"server.properties","line":\d+,"column":15,"text":"rcon.password=<redacted by felis>"/.test(JSON.stringify(b)), JSON.stringify(b)),
  },
  { method: 'GET', path: `/api/v1/servers/survival/files/search?content=${q('hunter2')}`, status: [200], check: (b) => assert.ok(JSON.stringify(b).includes('"matches":[]'), JSON.stringify(b)) },
];
