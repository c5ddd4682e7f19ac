/** files-compress's end-to-end scenarios, `rbac` and `container` (test/support/function-e2e.ts says what each is for). @module */

import { backgroundOpsEnded, type ContainerCall, opEnds, type Place, type RbacScenario } from '../../test/support/function-e2e.ts';

// Starting a background op is checks, the lock and one create; the op's own Job then holds the
// world, so the next scenario (and the same one's second run) waits for it to end (the listing
// reads its finished Pod's log).
//
// Its default name carries the second it was asked in: a second run makes a new archive.
export const rbac: RbacScenario = { setup: backgroundOpsEnded, calls: [['POST', '/api/v1/servers/survival/files/compress', { paths: ['plugins', 'eula.txt'], format: 'tar.zst' }]] };

export const container: ContainerCall[] = [
  { method: 'POST', path: '/api/v1/servers/survival/files/compress', body: { paths: ['made/plugins'], format: 'tar.zst', name: 'p.tar.zst' }, status: [202], check: opEnds('succeeded') },
];

/** It packs what files-unzip extracted. */
export const containerOrder: Place = { after: ['files-unzip'] };
