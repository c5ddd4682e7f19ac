import assert from 'node:assert/strict';
import { test } from 'node:test';
import { holdsWorld, isOp, mutates, needsChown, OPS } from './ops.ts';

test('mutates: everything but list and read; CHOWN only where files are created', () => {
  // As sets: the op list's order is the capability folders'.
  assert.deepEqual(
    OPS.filter(mutates).sort(),
    [
      'write',
      'mkdir',
      'delete',
      'rename',
      'upload',
      'unzip',
      'zip',
      'copy',
      'delete-many',
      'move-many',
      'chmod-many',
      'pull',
      'compress',
      'trash-restore',
      'trash-purge',
      'pull-place',
      'region-prune',
    ].sort(),
  );
  assert.equal(mutates('search'), false);
  assert.equal(mutates('trash-list'), false);
  assert.deepEqual(OPS.filter(needsChown).sort(), ['write', 'mkdir', 'upload', 'unzip', 'zip', 'copy', 'pull', 'compress', 'trash-restore', 'region-prune'].sort());
  assert.equal(isOp('zip'), true);
  assert.equal(isOp('chmod'), false);
  assert.equal(isOp('unzip'), true);
});

test('holdsWorld: every mutation but a pull, which writes only its own staging; its placement holds', () => {
  assert.deepEqual(
    OPS.filter((op) => mutates(op) && !holdsWorld(op)),
    ['pull'],
  );
  assert.equal(holdsWorld('pull-place'), true);
  assert.equal(holdsWorld('read'), false);
  assert.equal(needsChown('pull-place'), false, 'the pull gave the file to the game already; a link needs no chown');
});
