import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { checkResult, decodeList, decodeRead, decodeSearch, decodeWrite } from './decode.ts';
import { FileEditError, ReadDamagedError, UnknownResultCodeError, EDIT_ERRORS } from './errors.ts';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

test('the seven codes become typed errors carrying the Job message', () => {
  for (const kind of Object.keys(EDIT_ERRORS)) {
    assert.throws(() => checkResult({ code: kind, error: 'foo.yml does not exist' }), (e: Error) =>
      e instanceof FileEditError && e.kind === kind && e.message.endsWith(': foo.yml does not exist'),
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
  assert.deepEqual(decodeList({}), { entries: [], truncated: false, free: 0 });
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
  assert.throws(() => decodeBatch({ code: 'batch_conflict', error: 'two moves of the batch go to b', entry: 'b' }), (e: Error) =>
    e instanceof FileEditError && e.code === 'batch_conflict' && (e.details as { path?: string } | undefined)?.path === 'b',
  );
  assert.throws(() => decodeBatch({ code: 'wat', error: 'x' }), UnknownResultCodeError);
  assert.deepEqual(decodeBatch({ done: ['a'], failed: [{ path: 'b', error: { code: 'no_space', message: 'full' } }, { path: 'c', error: { code: 'wat', message: 'm' } }] }), {
    done: ['a'],
    failed: [{ path: 'b', error: { code: 'volume_full', message: 'full' } }, { path: 'c', error: { code: 'internal', message: 'm' } }],
  });
  assert.deepEqual(decodeBatch({}), { done: [], failed: [] });
});
