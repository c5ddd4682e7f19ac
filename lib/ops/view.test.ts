import assert from 'node:assert/strict';
import { test } from 'node:test';
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
  outcomeUnknown: false,
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

test('a failure without a result whose program never ran is job_failed: nothing changed, run it again', () => {
  const v = (reason: string) => opView({ ...base, state: 'failed', finished: new Date(), reason }).error;
  assert.deepEqual(v('DeadlineExceeded'), {
    code: 'job_failed',
    message: 'the file operation ran out of time before it started (DeadlineExceeded); nothing was changed: run it again',
  });
  assert.deepEqual(v('OOMKilled'), {
    code: 'job_failed',
    message: 'the file operation ran out of memory (OOMKilled); an archive of this many files has to be split into smaller ones',
  });
  for (const r of ['BackoffLimitExceeded', 'Failed']) {
    assert.deepEqual(v(r), { code: 'job_failed', message: `the file operation did not start (${r}); nothing was changed: run it again` });
  }
  assert.equal(jobFailedMessage('Evicted'), 'the file operation did not start (Evicted); nothing was changed: run it again');
});

test('an op that may have run without a readable result is outcome_unknown: check the files, never "run it again"', () => {
  const v = (reason: string) => opView({ ...base, state: 'failed', finished: new Date(), reason, outcomeUnknown: true }).error!;
  const check = 'the outcome is unknown: check the files before running it again';
  assert.deepEqual(v('ResultUnavailable'), { code: 'outcome_unknown', message: `the file operation ended, but its report cannot be read (ResultUnavailable); ${check}` });
  assert.deepEqual(v('DeadlineExceeded'), { code: 'outcome_unknown', message: `the file operation ran out of time (DeadlineExceeded) before it could report how it went; ${check}` });
  assert.deepEqual(v('NodeRestarted'), { code: 'outcome_unknown', message: `the service or its node restarted while the file operation ran (NodeRestarted); ${check}` });
  for (const r of ['BackoffLimitExceeded', 'Evicted', 'Failed']) {
    assert.deepEqual(v(r), { code: 'outcome_unknown', message: `the file operation stopped before it could report how it went (${r}); ${check}` });
  }
  for (const r of ['ResultUnavailable', 'DeadlineExceeded', 'NodeRestarted', 'BackoffLimitExceeded']) assert.doesNotMatch(v(r).message, /run it again/);
  // A printed result still decides, even with the flag set.
  const refused = opView({ ...base, state: 'failed', finished: new Date(), outcomeUnknown: true, result: { code: 'exists', error: 'a exists', conflicts: ['a'] } });
  assert.deepEqual(refused.error, { code: 'file_exists', message: 'a exists', conflicts: ['a'] });
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

test('an op a later op recovered says what became of it: all in place (succeeded), or none of it and interrupted', () => {
  const by = '00000000000000bb';
  const done = opView({ ...base, state: 'succeeded', finished: new Date(), reason: 'NodeRestarted', outcomeUnknown: false, recovered: { now: 'new', by } });
  assert.equal(done.error, undefined);
  assert.equal(done.recovered?.now, 'new');
  assert.match(done.recovered!.message, new RegExp(`\\(NodeRestarted\\); op ${by} finished placing it: all of its files are in place`));
  const undone = opView({ ...base, state: 'failed', finished: new Date(), reason: 'BackoffLimitExceeded', outcomeUnknown: false, recovered: { now: 'old', by } });
  assert.equal(undone.error?.code, 'interrupted');
  assert.match(undone.error!.message, /put back what it had placed: none of its files are in the world, so it can be run again/);
  const gone = opView({ ...base, state: 'failed', finished: new Date(), reason: 'BackoffLimitExceeded', outcomeUnknown: false, recovered: { now: 'gone', by } });
  assert.deepEqual([gone.error?.code, /destination folder was removed/.test(gone.error!.message)], ['interrupted', true]);
});

test('an op that undid itself on a stop while staging says so, and that it can be run again', () => {
  const v = opView({ ...base, state: 'failed', finished: new Date(), reason: 'BackoffLimitExceeded', outcomeUnknown: false, recovered: { now: 'old', by: base.id } });
  assert.equal(v.error?.code, 'interrupted');
  assert.match(v.error!.message, /stopped \(BackoffLimitExceeded\) before it placed anything, and removed what it had staged/);
});
