import assert from 'node:assert/strict';
import { test } from 'node:test';
import { UnknownResultCodeError } from '../../lib/files/errors.ts';
import { decodeWrite } from './result.ts';

test('an unknown code is an error, never a success', () => {
  assert.throws(() => decodeWrite({ code: 'weird', sha256: 'x' }), UnknownResultCodeError);
});
