/** world-lock's end-to-end scenarios, `rbac` and `container` (test/support/function-e2e.ts says what each is for). @module */

import { GRACE_MS, lockValue } from '../../lib/maintenance/holder.ts';
import { type ContainerCall, LOCK, type RbacScenario } from '../../test/support/function-e2e.ts';
import { setServer } from '../../test/support/servers.ts';

export const rbac: RbacScenario = {
  setup: (c) => setServer(c, 'survival', { annotations: { [LOCK]: lockValue('backup', new Date(Date.now() - GRACE_MS - 1000)) } }),
  calls: [['DELETE', '/api/v1/servers/survival/lock']],
};

export const container: ContainerCall[] = [
  {
    setup: (s) => setServer(s.cluster, 'survival', { annotations: { [LOCK]: lockValue('backup', new Date(Date.now() - GRACE_MS - 1000)) } }),
    method: 'DELETE',
    path: '/api/v1/servers/survival/lock',
    status: [200],
  },
];
