import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ASYNC_OPS, BATCH_OPS, EDIT_OPS, HEAP_LIMITED_OPS, ITEMS_OPS, JOURNALED_OPS, lostResultOf, needsFowner, OPS, opHas, RERUNNABLE_OPS, SERVE_OPS } from './ops.ts';

// The lists the code keyed by op before the contracts, pinned: a trait changed by mistake shows here.
test('the op-keyed lists derived from the contracts', () => {
  assert.deepEqual(ASYNC_OPS, ['upload', 'unzip', 'zip', 'copy', 'pull', 'compress']);
  assert.deepEqual(HEAP_LIMITED_OPS, ['unzip', 'zip', 'copy', 'compress']);
  assert.deepEqual(JOURNALED_OPS, ['unzip']);
  assert.deepEqual(EDIT_OPS, ['write', 'mkdir', 'delete', 'rename', 'copy', 'delete-many', 'move-many', 'chmod-many']);
  assert.deepEqual(BATCH_OPS, ['delete-many', 'move-many', 'chmod-many']);
  assert.deepEqual(ITEMS_OPS, ['delete-many', 'move-many', 'chmod-many', 'compress']);
  assert.deepEqual(SERVE_OPS, ['list', 'read', 'search']);
  assert.deepEqual(RERUNNABLE_OPS, ['write', 'mkdir', 'unzip', 'zip', 'copy', 'compress']);
  assert.deepEqual(OPS.filter(needsFowner), ['chmod-many']);
  assert.deepEqual(
    OPS.filter((op) => opHas(op, 'asWriter')),
    ['trash-list'],
  );
  assert.deepEqual(
    OPS.filter((op) => lostResultOf(op) === 'atomic'),
    ['write', 'mkdir', 'rename', 'copy', 'trash-purge'],
  );
  assert.deepEqual(
    OPS.filter((op) => lostResultOf(op) === 'settled'),
    ['delete-many', 'move-many', 'trash-restore'],
  );
  assert.equal(opHas('toString', 'mutates'), false, 'a name that is no op has no trait');
});
