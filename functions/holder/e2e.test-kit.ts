/** holder's end-to-end scenarios, `rbac` and `container` (test/support/function-e2e.ts says what each is for). @module */

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ContainerCall, Place, RbacScenario } from '../../test/support/function-e2e.ts';
import { ROOT } from '../../test/support/stack.ts';

export const rbac: RbacScenario = {
  calls: [
    ['GET', '/api/v1/servers/survival/holder'],
    ['GET', '/api/v1/holders'],
  ],
};

export const container: ContainerCall[] = [
  { method: 'GET', path: '/api/v1/servers/survival/holder', status: [200], check: (b) => assert.deepEqual(b, { held: false }) },
  // The API reference from the image alone: the document and the page's files beside the bundles.
  { method: 'GET', path: '/openapi.json', status: [200], check: (b) => assert.deepEqual(b, JSON.parse(readFileSync(join(ROOT, 'docs/openapi.json'), 'utf8'))) },
  { method: 'GET', path: '/docs/assets/swagger-ui-bundle.js', status: [200], check: (b) => assert.ok(String(b).length > 100_000) },
];

/** Its first call finds the world held by nothing: before any other function's calls. */
export const containerOrder: Place = 'first';
