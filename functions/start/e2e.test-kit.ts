/** start's end-to-end scenarios, `rbac` and `container` (test/support/function-e2e.ts says what each is for). @module */

import type { ContainerCall, Place, RbacScenario } from '../../test/support/function-e2e.ts';

export const rbac: RbacScenario = {
  calls: [
    ['POST', '/api/v1/servers/survival/start'],
    ['POST', '/api/v1/servers/survival/stop'],
  ],
};

export const container: ContainerCall[] = [{ method: 'POST', path: '/api/v1/servers/survival/start', status: [200, 202] }];

/** A started server holds its world: after every other function's calls. */
export const containerOrder: Place = 'last';
