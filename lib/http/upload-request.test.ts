import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DomainError } from '../errors.ts';
import { checkLocalPath, declaredLength } from './upload-request.ts';

const refusal = (code: string) => (e: unknown) => e instanceof DomainError && e.code === code;

test('an upload path must name a file inside the world, and no working name', () => {
  checkLocalPath('plugins/a.jar');
  checkLocalPath('a/../b.txt');
  for (const bad of ['', '/', '/etc/passwd', '../x', 'a/../../x', '.', 'a/..']) assert.throws(() => checkLocalPath(bad), refusal('bad_path'), bad);
  assert.throws(() => checkLocalPath('plugins/.felis-edit-0123456789ab'), refusal('bad_path'));
});

test('an upload needs a Content-Length that is a byte count', () => {
  assert.equal(declaredLength(new Headers({ 'content-length': '42' })), 42);
  assert.throws(() => declaredLength(new Headers()), refusal('length_required'));
  for (const bad of ['-1', '1e3', '4.0', '12345678901234567']) assert.throws(() => declaredLength(new Headers({ 'content-length': bad })), refusal('bad_request'), bad);
});
