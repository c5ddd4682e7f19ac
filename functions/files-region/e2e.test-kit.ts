/** files-region's end-to-end scenarios, `rbac` and `container` (test/support/function-e2e.ts says what each is for). @module */

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { backgroundOpsEnded, type ContainerCall, opEnds, type RbacScenario, type Setup, suiteDir } from '../../test/support/function-e2e.ts';
import { pruneWorld } from './region.test-kit.ts';

const S = '/api/v1/servers/survival';
const TABLE = `${S}/files/region?path=${encodeURIComponent('pruned/region/r.0.0.mca')}`;
const PRUNE = `${S}/files/region/prune`;

// A table, a dry run and a prune (its lock and one create; its Job then holds the world, so the
// next scenario waits for it to end). The world is written afresh before each run.
const setup: Setup = async (c) => {
  await backgroundOpsEnded(c);
  pruneWorld(join(suiteDir, 'worlds', 'survival', 'pruned'));
};
export const rbac: RbacScenario = {
  setup,
  calls: [
    ['GET', TABLE],
    ['POST', PRUNE, { path: 'pruned', inhabited_below_ticks: 1000, dry_run: true }],
    ['POST', PRUNE, { path: 'pruned', inhabited_below_ticks: 1000 }],
  ],
};

export const container: ContainerCall[] = [
  {
    method: 'GET',
    path: TABLE,
    setup: async (s) => void pruneWorld(join(s.world, 'pruned')),
    status: [200],
    check: (b) => assert.equal(b.chunks.length, 7, JSON.stringify(b).slice(0, 500)),
  },
  {
    method: 'POST',
    path: PRUNE,
    body: { path: 'pruned', inhabited_below_ticks: 1000, dry_run: true },
    status: [200],
    check: (b) => assert.deepEqual([b.files_changed, b.chunks_removed], [2, 6]),
  },
  { method: 'POST', path: PRUNE, body: { path: 'pruned', inhabited_below_ticks: 1000 }, status: [202], check: opEnds('succeeded') },
];
