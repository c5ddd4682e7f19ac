/** files-zip's end-to-end scenarios, `rbac` and `container` (test/support/function-e2e.ts says what each is for). @module */

import { backgroundOpsEnded, type ContainerCall, opEnds, q, type RbacScenario } from '../../test/support/function-e2e.ts';

// Starting a background op is checks, the lock and one create; the op's own Job then holds the
// world, so the next scenario (and the same one's second run) waits for it to end (the listing
// reads its finished Pod's log).
export const rbac: RbacScenario = { setup: backgroundOpsEnded, calls: [['POST', `/api/v1/servers/survival/files/zip?path=${q('plugins')}`, {}]] };

export const container: ContainerCall[] = [{ method: 'POST', path: `/api/v1/servers/survival/files/zip?path=${q('plugins')}`, body: { name: 'p.zip' }, status: [202], check: opEnds('succeeded') }];
