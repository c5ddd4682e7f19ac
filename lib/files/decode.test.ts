import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { checkResult, decodeList, decodeRead, decodeSearch, decodeWrite } from './decode.ts';
import { EDIT_ERRORS, FileEditError, ReadDamagedError, UnknownResultCodeError } from './errors.ts';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

test('the seven codes become typed errors carrying the Job message', () => {
  for (const kind of Object.keys(EDIT_ERRORS)) {
    assert.throws(
      () => checkResult({ code: kind, error: 'foo.yml does not exist' }),
      (e: Error) => e instanceof FileEditError && e.kind === kind && e.message.endsWith(': foo.yml does not exist'),
    );
  }
  assert.throws(() => checkResult({ code: 'not_found', error: 'foo.yml does not exist' }), {
    message: 'fileedit: no such file or directory: foo.yml does not exist',
  });
});

test('an unknown code is an error, never a success', () => {
  assert.throws(() => checkResult({ code: 'archive_unsafe' }), UnknownResultCodeError);
  assert.throws(() => decodeWrite({ code: 'weird', sha256: 'x' }), UnknownResultCodeError);
});

test('an empty listing is [] and a missing avail means a full volume', () => {
  assert.deepEqual(decodeList({}), { entries: [], truncated: false, free: 0, trashBytes: 0 });
  assert.equal(decodeList({ avail: -1 }).free, -1);
});

test('a read must hash to content_sha256; an empty file is empty bytes', () => {
  const bytes = Buffer.from('hello');
  const ok = decodeRead({ content: bytes.toString('base64'), sha256: 'disk', content_sha256: sha(bytes) });
  assert.deepEqual(ok.content, bytes);
  assert.equal(ok.sha256, 'disk');
  assert.throws(() => decodeRead({ content: bytes.toString('base64'), sha256: 'disk', content_sha256: sha(Buffer.from('x')) }), ReadDamagedError);
  assert.throws(() => decodeRead({ content: bytes.toString('base64'), sha256: 'disk' }), ReadDamagedError);
  const empty = decodeRead({ sha256: sha(Buffer.alloc(0)), content_sha256: sha(Buffer.alloc(0)) });
  assert.equal(empty.content.length, 0);
});

test('a search: absent fields are zero (nothing found, not truncated, none scanned); a refusal is its typed error', () => {
  assert.deepEqual(decodeSearch({}), { matches: [], truncated: false, scanned: 0 });
  const m = { path: 'world/level.dat', name: 'level.dat', size: 4, is_dir: false, mod_time: '2026-11-29T10:00:00Z' };
  assert.deepEqual(decodeSearch({ matches: [m], truncated: true, scanned: 9 }), { matches: [m], truncated: true, scanned: 9 });
  assert.throws(() => decodeSearch({ code: 'not_found', error: 'nope does not exist' }), FileEditError);
});

test('a batch: a refusal throws with the bad item path; failures after the check get envelope codes', async () => {
  const { decodeBatch } = await import('./decode.ts');
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
});

test('trash results: a page maps items and next, a restore onto an existing path names it, a purge counts; trash_not_found is typed', async () => {
  const { decodeTrashList, decodeTrashRestore, decodeTrashPurge, decodeTrashed, decodeBatch } = await import('./decode.ts');
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
  assert.deepEqual(decodeTrashed({ trash_id: item.id }), { trashId: item.id });
  assert.deepEqual(decodeTrashed({}), {});
  assert.deepEqual(decodeBatch({ done: ['a'], trash_id: item.id }), { done: ['a'], failed: [], trashId: item.id });
  assert.equal(decodeList({ avail: 5, trash_bytes: 7 }).trashBytes, 7);
});
