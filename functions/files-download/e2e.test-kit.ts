/** files-download's end-to-end scenarios, `rbac` and `container` (test/support/function-e2e.ts says what each is for). @module */

import assert from 'node:assert/strict';
import { type ContainerCall, exportsEnded, type Place, q, type RbacScenario } from '../../test/support/function-e2e.ts';

// Signing is the gates alone; the GET on the signed URL takes the export lock, creates the
// export Job, finds its Pod and streams the file. Last, and after the previous download ended:
// its Job holds the world until the Pod has served.
export const rbac: RbacScenario = {
  setup: exportsEnded,
  calls: [
    ['POST', `/api/v1/servers/survival/files/download?path=${q('eula.txt')}`],
    ['GET', (previous) => new URL((previous as { url: string }).url, 'http://origin.invalid').pathname],
  ],
};

export const container: ContainerCall[] = [
  { method: 'POST', path: `/api/v1/servers/survival/files/download?path=${q('eula.txt')}`, status: [200] },
  { method: 'GET', path: (v) => new URL(v.url, 'http://origin.invalid').pathname + new URL(v.url, 'http://origin.invalid').search, status: [200], check: (b) => assert.match(String(b), /eula/) },
];

/** Its export Job holds the world until its Pod has served: after the calls that change the world. */
export const containerOrder: Place = 'last';
