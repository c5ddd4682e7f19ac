import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EDIT_ERRORS, FileEditError, UnknownResultCodeError } from './errors.ts';
import { checkResult } from './result-check.ts';

test('the seven codes become typed errors carrying the Job message', () => {
  for (const kind of Object.keys(EDIT_ERRORS)) {
    assert.throws(
      () => checkResult({ code: kind, error: 'foo.yml does not exist' }),
      (e: Error) => e instanceof FileEditError && e.kind === kind && e.message === 'foo.yml does not exist',
    );
  }
  // The Job's message alone: no internal prefix, no sentinel text before it saying it twice.
  assert.throws(() => checkResult({ code: 'exists', error: 'notes/hi.txt already exists' }), {
    message: 'notes/hi.txt already exists',
  });
});

test('an unknown code is an error, never a success', () => {
  assert.throws(() => checkResult({ code: 'archive_unsafe' }), UnknownResultCodeError);
});
