import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ASYNC_OPS, BATCH_OPS, EDIT_OPS, HEAP_LIMITED_OPS, ITEMS_OPS, JOURNALED_OPS, lostResultOf, needsFowner, OPS, opHas, RERUNNABLE_OPS, SERVE_OPS } from './ops.ts';

// The lists the code keyed by op before the contracts, pinned (as sets: the op list's order is the
// folders'): a trait changed by mistake shows here.
const same = (actual: readonly string[], expected: string[]) => assert.deepEqual([...actual].sort(), expected.sort());

test('the op-keyed lists derived from the contracts', () => {
  same(ASYNC_OPS, ['upload', 'unzip', 'zip', 'copy', 'pull', 'compress', 'region-prune']);
  same(HEAP_LIMITED_OPS, ['unzip', 'zip', 'copy', 'compress']);
  same(JOURNALED_OPS, ['unzip', 'region-prune']);
  same(EDIT_OPS, ['write', 'mkdir', 'delete', 'rename', 'copy', 'delete-many', 'move-many', 'chmod-many']);
  same(BATCH_OPS, ['delete-many', 'move-many', 'chmod-many']);
  same(ITEMS_OPS, ['delete-many', 'move-many', 'chmod-many', 'compress']);
  same(SERVE_OPS, ['list', 'read', 'search', 'usage']);
  same(RERUNNABLE_OPS, ['write', 'mkdir', 'unzip', 'zip', 'copy', 'compress']);
  same(OPS.filter(needsFowner), ['chmod-many']);
  same(
    OPS.filter((op) => opHas(op, 'asWriter')),
    ['trash-list'],
  );
  same(
    OPS.filter((op) => lostResultOf(op) === 'atomic'),
    ['write', 'mkdir', 'rename', 'copy', 'trash-purge'],
  );
  same(
    OPS.filter((op) => lostResultOf(op) === 'settled'),
    ['delete-many', 'move-many', 'trash-restore', 'region-prune'],
  );
  assert.equal(opHas('toString', 'mutates'), false, 'a name that is no op has no trait');
});
