import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { OpState } from './state.ts';
import { jobFailedMessage, opErrorCode, opView, startedView } from './view.ts';

const base: OpState = {
  id: '0123456789abcdef',
  op: 'unzip',
  path: 'pack.zip',
  state: 'running',
  started: new Date('2026-12-01T05:00:00.250Z'),
  finished: undefined,
  done: 40,
  total: 100,
  result: undefined,
  reason: '',
};

test('a running op: RFC 3339 start in whole seconds, progress, and no finish, files, bytes or error keys', () => {
  const v = opView(base);
  assert.deepEqual(v, { id: '0123456789abcdef', op: 'unzip', path: 'pack.zip', state: 'running', started_at: '2026-12-01T05:00:00Z', done: 40, total: 100 });
  assert.deepEqual(Object.keys(v), ['id', 'op', 'path', 'state', 'started_at', 'done', 'total']);
});

test('a success shows files and bytes only when non-zero', () => {
  const done = { ...base, state: 'succeeded' as const, finished: new Date('2026-12-01T05:02:03Z'), result: { files: 12, bytes: 3456 } };
  assert.deepEqual(opView(done), { ...opView(base), state: 'succeeded', finished_at: '2026-12-01T05:02:03Z', files: 12, bytes: 3456 });
  const empty = opView({ ...done, result: {} });
  assert.equal('files' in empty, false);
  assert.equal('bytes' in empty, false);
  assert.equal('error' in empty, false);
});

test('a refusal maps exists, no_space and conflict to the sync codes; the rest pass through with their details', () => {
  assert.equal(opErrorCode('exists'), 'file_exists');
  assert.equal(opErrorCode('no_space'), 'volume_full');
  assert.equal(opErrorCode('conflict'), 'file_changed');
  for (const c of ['archive_invalid', 'archive_unsafe', 'archive_symlink', 'type_conflict', 'bad_path', 'not_found', 'too_large', 'digest_mismatch']) assert.equal(opErrorCode(c), c);
  const failed = {
    ...base,
    state: 'failed' as const,
    finished: new Date('2026-12-01T05:01:00Z'),
    result: { code: 'exists', error: '3 files exist', conflicts: ['a', 'b', 'c'], conflict_count: 3, files: 9, bytes: 9 },
  };
  const v = opView(failed);
  assert.deepEqual(v.error, { code: 'file_exists', message: '3 files exist', conflicts: ['a', 'b', 'c'], conflict_count: 3 });
  assert.equal('files' in v, false, 'no files or bytes on failure');
  const space = opView({ ...failed, result: { code: 'no_space', error: 'needs more', need: 5000, avail: 10 } });
  assert.deepEqual(space.error, { code: 'volume_full', message: 'needs more', need: 5000, avail: 10 });
  const unsafe = opView({ ...failed, result: { code: 'archive_unsafe', error: 'escapes', entry: '../x' } });
  assert.deepEqual(unsafe.error, { code: 'archive_unsafe', message: 'escapes', entry: '../x' });
});

test('a failure without a result is job_failed, with the message its reason calls for', () => {
  const v = (reason: string) => opView({ ...base, state: 'failed', finished: new Date(), reason }).error;
  assert.deepEqual(v('DeadlineExceeded'), { code: 'job_failed', message: 'the file operation ran out of time (DeadlineExceeded); run it again' });
  assert.deepEqual(v('OOMKilled'), {
    code: 'job_failed',
    message: 'the file operation ran out of memory (OOMKilled); an archive of this many files has to be split into smaller ones',
  });
  for (const r of ['BackoffLimitExceeded', 'ResultUnavailable', 'Failed']) {
    assert.deepEqual(v(r), { code: 'job_failed', message: `the file operation stopped before it could report how it went (${r}); run it again` });
  }
  assert.equal(jobFailedMessage('Evicted'), 'the file operation stopped before it could report how it went (Evicted); run it again');
});

test('the answer to a start is running at 0/0 with nothing else', () => {
  assert.deepEqual(startedView('00000000000000ff', 'zip', 'world', new Date('2026-12-01T06:00:00.999Z')), {
    id: '00000000000000ff',
    op: 'zip',
    path: 'world',
    state: 'running',
    started_at: '2026-12-01T06:00:00Z',
    done: 0,
    total: 0,
  });
});
