import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FileEditError, UnknownResultCodeError } from '../../lib/files/errors.ts';
import { decodeBatch } from './result.ts';

test('a batch: a refusal throws with the bad item path; failures after the check get envelope codes', () => {
  assert.throws(
    () => decodeBatch({ code: 'batch_conflict', error: 'two moves of the batch go to b', entry: 'b' }),
    (e: Error) => e instanceof FileEditError && e.code === 'batch_conflict' && (e.details as { path?: string } | undefined)?.path === 'b',
  );
  assert.throws(() => decodeBatch({ code: 'wat', error: 'x' }), UnknownResultCodeError);
  assert.deepEqual(
    decodeBatch({
      done: ['a'],
      failed: [
        { path: 'b', error: { code: 'no_space', message: 'full' } },
        { path: 'c', error: { code: 'wat', message: 'm' } },
      ],
    }),
    {
      done: ['a'],
      failed: [
        { path: 'b', error: { code: 'volume_full', message: 'full' } },
        { path: 'c', error: { code: 'internal', message: 'm' } },
      ],
    },
  );
  assert.deepEqual(decodeBatch({}), { done: [], failed: [] });
  assert.deepEqual(decodeBatch({ done: ['a'], trash_id: '0190a1b2c3d4e5f6' }), { done: ['a'], failed: [], trashId: '0190a1b2c3d4e5f6' });
});
