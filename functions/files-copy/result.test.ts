import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FileEditError } from '../../lib/files/errors.ts';
import { decodeCopy } from './result.ts';

test('a synchronous copy: where it landed and what it copied; absent fields are empty; a refusal is its typed error', () => {
  const sha = 'a'.repeat(64);
  assert.deepEqual(decodeCopy({ to: 'plugins/x (copy)', sha256: sha, files: 3, bytes: 12, skipped: 1 }), { to: 'plugins/x (copy)', sha256: sha, files: 3, bytes: 12, skipped: 1 });
  assert.deepEqual(decodeCopy({}), { to: '', sha256: '', files: 0, bytes: 0, skipped: 0 });
  assert.throws(() => decodeCopy({ code: 'exists', error: 'plugins/x (copy) exists' }), FileEditError);
});
