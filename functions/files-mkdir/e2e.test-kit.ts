/** files-mkdir's end-to-end scenarios, `rbac` and `container` (test/support/function-e2e.ts says what each is for). @module */

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { type ContainerCall, interruptedExtraction, q, type RbacScenario } from '../../test/support/function-e2e.ts';

// Each sync mutation first finds an interrupted extraction to recover (and record).
export const rbac: RbacScenario = { setup: interruptedExtraction, calls: [['POST', `/api/v1/servers/survival/files/mkdir?path=${q('newdir')}`]] };

export const container: ContainerCall[] = [
  { method: 'POST', path: `/api/v1/servers/survival/files/mkdir?path=${q('made')}`, status: [200, 201], check: (_b, s) => assert.ok(existsSync(join(s.world, 'made'))) },
  // The image's Job program takes --parents too.
  { method: 'POST', path: `/api/v1/servers/survival/files/mkdir?path=${q('made/deep/er')}&parents=true`, status: [200], check: (_b, s) => assert.ok(existsSync(join(s.world, 'made/deep/er'))) },
];
