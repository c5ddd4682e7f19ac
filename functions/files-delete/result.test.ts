import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeTrashed } from './result.ts';

test('a delete names the trash record it made, and nothing when it made none', () => {
  assert.deepEqual(decodeTrashed({ trash_id: '0190a1b2c3d4e5f6' }), { trashId: '0190a1b2c3d4e5f6' });
  assert.deepEqual(decodeTrashed({}), {});
});
