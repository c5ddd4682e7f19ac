/** files-uploads's end-to-end scenarios, `rbac` and `container` (test/support/function-e2e.ts says what each is for). @module */

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ContainerCall, q, type RbacScenario, upload, uploadHeaders, uploadSessionsEnded } from '../../test/support/function-e2e.ts';

// A session: begun (a receiver Job under the lock), a part, its status, committed.
export const rbac: RbacScenario = {
  setup: uploadSessionsEnded,
  calls: [
    ['POST', `/api/v1/servers/survival/files/uploads?path=${q('plugins/session.txt')}`, { size: 9 }],
    ['PUT', (v) => `/api/v1/servers/survival/files/uploads/${v.id}?offset=0`, upload('uploaded\n')],
    ['GET', (v) => `/api/v1/servers/survival/files/uploads/${v.id}`],
    ['POST', (v) => `/api/v1/servers/survival/files/uploads/${v.id}/commit`, { overwrite: true }],
  ],
};

export const container: ContainerCall[] = [
  { method: 'POST', path: `/api/v1/servers/survival/files/uploads?path=${q('plugins/session.txt')}`, body: { size: 9 }, status: [200, 201] },
  { method: 'PUT', path: (v) => `/api/v1/servers/survival/files/uploads/${v.id}?offset=0`, body: 'uploaded\n', headers: uploadHeaders('uploaded\n'), status: [200] },
  {
    method: 'POST',
    path: (v) => `/api/v1/servers/survival/files/uploads/${v.id}/commit`,
    body: { overwrite: true },
    // 202 with the op, already succeeded here: a commit of a large file may still be landing.
    status: [200, 201, 202],
    check: (_b, s) => assert.equal(readFileSync(join(s.world, 'plugins', 'session.txt'), 'utf8'), 'uploaded\n'),
  },
];
