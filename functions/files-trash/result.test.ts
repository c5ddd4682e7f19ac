import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FileEditError } from '../../lib/files/errors.ts';
import { decodeTrashList, decodeTrashPurge, decodeTrashRestore } from './result.ts';

test('trash results: a page maps items and next, a restore onto an existing path names it, a purge counts; trash_not_found is typed', () => {
  const item = { id: '0190a1b2c3d4e5f6', op: 'delete', paths: ['a'], bytes: 3, entries: 1, at: '2026-12-03T00:00:00.000Z', expires_at: '2026-12-10T00:00:00.000Z', actor: 'bearer' };
  assert.deepEqual(decodeTrashList({ trash_items: [item], trash_next: item.id, trash_bytes: 3 }), { items: [item], next: item.id, trashBytes: 3 });
  assert.deepEqual(decodeTrashList({}), { items: [], trashBytes: 0 });
  assert.deepEqual(decodeTrashRestore({ restored: ['a', 'b/c'] }), { restored: ['a', 'b/c'] });
  assert.throws(
    () => decodeTrashRestore({ code: 'exists', error: 'plugins/x exists', entry: 'plugins/x' }),
    (e: Error) => e instanceof FileEditError && e.kind === 'exists' && e.code === 'file_exists' && e.details?.path === 'plugins/x',
  );
  assert.throws(
    () => decodeTrashRestore({ code: 'trash_not_found', error: 'no record 0190a1b2c3d4e5f6' }),
    (e: Error) => e instanceof FileEditError && e.code === 'trash_not_found',
  );
  assert.throws(
    () => decodeTrashPurge({ code: 'trash_not_found' }),
    (e: Error) => e instanceof FileEditError && e.code === 'trash_not_found',
  );
  assert.deepEqual(decodeTrashPurge({ purged: 2, bytes: 10 }), { purged: 2, bytes: 10 });
  assert.deepEqual(decodeTrashPurge({}), { purged: 0, bytes: 0 });
});
