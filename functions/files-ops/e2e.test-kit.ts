/** files-ops's end-to-end scenarios, `rbac` and `container` (test/support/function-e2e.ts says what each is for). @module */

import assert from 'node:assert/strict';
import { backgroundOpsEnded, type ContainerCall, type Place, type RbacScenario } from '../../test/support/function-e2e.ts';

export const rbac: RbacScenario = { setup: backgroundOpsEnded, calls: [['GET', '/api/v1/servers/survival/files/ops']] };

export const container: ContainerCall[] = [{ method: 'GET', path: '/api/v1/servers/survival/files/ops', status: [200], check: (b) => assert.ok(b.ops.length >= 3, JSON.stringify(b)) }];

/** It lists their background ops. */
export const containerOrder: Place = { after: ['files-zip', 'files-unzip', 'files-compress', 'files-pull'] };
