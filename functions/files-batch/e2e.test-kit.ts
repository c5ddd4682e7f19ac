/** files-batch's end-to-end scenarios, `rbac` and `container` (test/support/function-e2e.ts says what each is for). @module */

import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ContainerCall, interruptedExtraction, type Place, type RbacScenario, suiteDir } from '../../test/support/function-e2e.ts';

// A file of its own (earlier scenarios move and delete the demo world's), changed, moved and deleted.
export const rbac: RbacScenario = {
  setup: async (c, tag) => {
    await interruptedExtraction(c, tag);
    writeFileSync(join(suiteDir, 'worlds', 'survival', 'batch.txt'), 'many\n');
  },
  calls: [
    ['POST', '/api/v1/servers/survival/files/chmod', { files: [{ path: 'batch.txt', mode: '640' }] }],
    ['POST', '/api/v1/servers/survival/files/move', { moves: [{ from: 'batch.txt', to: 'batch.moved' }] }],
    ['POST', '/api/v1/servers/survival/files/delete', { paths: ['batch.moved'] }],
  ],
};

export const container: ContainerCall[] = [
  { method: 'POST', path: '/api/v1/servers/survival/files/delete', body: { paths: ['notes.copy'] }, status: [200], check: (_b, s) => assert.ok(!existsSync(join(s.world, 'notes.copy'))) },
];

/** It deletes what files-copy made. */
export const containerOrder: Place = { after: ['files-copy'] };
