/** files-delete's end-to-end scenarios, `rbac` and `container` (test/support/function-e2e.ts says what each is for). @module */

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { type ContainerCall, interruptedExtraction, type Place, q, type RbacScenario } from '../../test/support/function-e2e.ts';

// Each sync mutation first finds an interrupted extraction to recover (and record).
export const rbac: RbacScenario = { setup: interruptedExtraction, calls: [['DELETE', `/api/v1/servers/survival/file?path=${q('plugins/README.txt')}`]] };

export const container: ContainerCall[] = [
  { method: 'DELETE', path: `/api/v1/servers/survival/file?path=${q('notes.old')}`, status: [200], check: (_b, s) => assert.ok(!existsSync(join(s.world, 'notes.old'))) },
];

/** It deletes what files-copy copied. */
export const containerOrder: Place = { after: ['files-copy'] };
