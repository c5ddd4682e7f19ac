/** files-upload's end-to-end scenarios, `rbac` and `container` (test/support/function-e2e.ts says what each is for). @module */

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ContainerCall, q, type RbacScenario, upload, uploadHeaders } from '../../test/support/function-e2e.ts';

// One receiver Job per upload: created, its Pod found by label and called on its address.
export const rbac: RbacScenario = { calls: [['PUT', `/api/v1/servers/survival/files/upload?path=${q('plugins/up.txt')}&overwrite=true`, upload('uploaded\n')]] };

export const container: ContainerCall[] = [
  {
    method: 'PUT',
    path: `/api/v1/servers/survival/files/upload?path=${q('plugins/up.txt')}&overwrite=true`,
    body: 'uploaded from a container\n',
    headers: uploadHeaders('uploaded from a container\n'),
    status: [200, 201],
    check: (_b, s) => assert.equal(readFileSync(join(s.world, 'plugins', 'up.txt'), 'utf8'), 'uploaded from a container\n'),
  },
];
