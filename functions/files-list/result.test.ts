import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeList } from './result.ts';

test('an empty listing is [] and a missing avail means a full volume', () => {
  assert.deepEqual(decodeList({}), { entries: [], truncated: false, free: 0, trashBytes: 0 });
  assert.equal(decodeList({ avail: -1 }).free, -1);
  assert.equal(decodeList({ avail: 5, trash_bytes: 7 }).trashBytes, 7);
});
