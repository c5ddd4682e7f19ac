import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EDIT_ERRORS, FileEditError, UnknownResultCodeError } from './errors.ts';
import { checkResult } from './result-check.ts';

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
});
