/** files-unzip's end-to-end scenarios, `rbac` and `container` (test/support/function-e2e.ts says what each is for). @module */

import { backgroundOpsEnded, type ContainerCall, opEnds, type Place, q, type RbacScenario } from '../../test/support/function-e2e.ts';

// Starting a background op is checks, the lock and one create; the op's own Job then holds the
// world, so the next scenario (and the same one's second run) waits for it to end (the listing
// reads its finished Pod's log).
export const rbac: RbacScenario = { setup: backgroundOpsEnded, calls: [['POST', `/api/v1/servers/survival/files/unzip?path=${q('missing.zip')}`, { overwrite: false }]] };

export const container: ContainerCall[] = [
  { method: 'POST', path: `/api/v1/servers/survival/files/unzip?path=${q('p.zip')}`, body: { to: 'made', overwrite: false }, status: [202], check: opEnds('succeeded') },
];

/** It extracts files-zip's archive into the folder files-mkdir made. */
export const containerOrder: Place = { after: ['files-zip', 'files-mkdir'] };
