/** files-write's end-to-end scenarios, `rbac` and `container` (test/support/function-e2e.ts says what each is for). @module */

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ContainerCall, interruptedExtraction, q, type RbacScenario, sha } from '../../test/support/function-e2e.ts';

// Each sync mutation first finds an interrupted extraction to recover (and record).
export const rbac: RbacScenario = {
  setup: interruptedExtraction,
  calls: [['PUT', `/api/v1/servers/survival/file?path=${q('notes.txt')}`, { content: Buffer.from('hi').toString('base64'), content_sha256: sha('hi') }]],
};

export const container: ContainerCall[] = [
  {
    method: 'PUT',
    path: `/api/v1/servers/survival/file?path=${q('notes.txt')}`,
    body: { content: Buffer.from('from a container\n').toString('base64'), content_sha256: sha('from a container\n') },
    status: [200],
    check: (_b, s) => assert.equal(readFileSync(join(s.world, 'notes.txt'), 'utf8'), 'from a container\n'),
  },
];
