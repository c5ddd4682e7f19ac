/** files-pull's end-to-end scenarios, `rbac` and `container` (test/support/function-e2e.ts says what each is for). @module */

import { backgroundOpsEnded, type ContainerCall, opEnds, type RbacScenario } from '../../test/support/function-e2e.ts';

// Starting a background op is checks, the lock and one create; the op's own Job then holds the
// world, so the next scenario (and the same one's second run) waits for it to end (the listing
// reads its finished Pod's log).
//
// A documentation address (TEST-NET-1): the pull Job's guard refuses it before any packet leaves.
export const rbac: RbacScenario = { setup: backgroundOpsEnded, calls: [['POST', '/api/v1/servers/survival/files/pull', { url: 'http://192.0.2.1/plugin.jar', path: 'plugins' }]] };

// A documentation address (TEST-NET-1): the pull Job's guard refuses it before any packet leaves.
export const container: ContainerCall[] = [
  { method: 'POST', path: '/api/v1/servers/survival/files/pull', body: { url: 'http://192.0.2.1/plugin.jar', path: 'plugins' }, status: [202], check: opEnds('failed') },
];
