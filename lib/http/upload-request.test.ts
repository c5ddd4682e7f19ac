import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DomainError } from '../errors.ts';
import { checkLocalPath, declaredLength } from './upload-request.ts';

const refusal = (code: string) => (e: unknown) => e instanceof DomainError && e.code === code;

test('an upload path must name a file inside the world, and no working name', () => {
  assert.equal(checkLocalPath('plugins/a.jar'), 'plugins/a.jar');
  assert.equal(checkLocalPath('a/../b.txt'), 'a/../b.txt');
  // A leading / is the world folder (lib/protocol/world-path.ts).
  assert.equal(checkLocalPath('/plugins/a.jar'), 'plugins/a.jar');
  for (const bad of ['', '/', '//', '/../x', '../x', 'a/../../x', '.', 'a/..']) assert.throws(() => checkLocalPath(bad), refusal('bad_path'), bad);
  assert.throws(() => checkLocalPath('plugins/.felis-edit-0123456789ab'), refusal('bad_path'));
});

test('an upload needs a Content-Length that is a byte count', () => {
  assert.equal(declaredLength(new Headers({ 'content-length': '42' })), 42);
  assert.throws(() => declaredLength(new Headers()), refusal('length_required'));
  for (const bad of ['-1', '1e3', '4.0', '12345678901234567']) assert.throws(() => declaredLength(new Headers({ 'content-length': bad })), refusal('bad_request'), bad);
});
