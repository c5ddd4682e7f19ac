/** files-copy's end-to-end scenarios, `rbac` and `container` (test/support/function-e2e.ts says what each is for). @module */

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { backgroundOpsEnded, type ContainerCall, interruptedExtraction, type Place, q, type RbacScenario } from '../../test/support/function-e2e.ts';

// A small file: one sync Job (which first recovers an interrupted extraction); a folder: a sync
// Job that refuses it, then the background Job.
export const rbac: RbacScenario = {
  setup: async (c, tag) => {
    await backgroundOpsEnded(c); // the previous run's folder copy holds the world until it ends
    await interruptedExtraction(c, tag);
  },
  calls: [
    ['POST', `/api/v1/servers/survival/files/copy?path=${q('eula.txt')}`, {}],
    ['POST', `/api/v1/servers/survival/files/copy?path=${q('plugins')}`, {}],
  ],
};

export const container: ContainerCall[] = [
  {
    method: 'POST',
    path: `/api/v1/servers/survival/files/copy?path=${q('notes.old')}`,
    body: { to: 'notes.copy' },
    status: [200],
    check: (_b, s) => assert.ok(existsSync(join(s.world, 'notes.copy'))),
  },
];

/** It copies what files-rename renamed. */
export const containerOrder: Place = { after: ['files-rename'] };
