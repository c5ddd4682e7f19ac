import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FileEditError } from '../../lib/files/errors.ts';
import { decodeSearch } from './result.ts';

test('a search: absent fields are zero (nothing found, not truncated, none scanned); a refusal is its typed error', () => {
  assert.deepEqual(decodeSearch({}), { matches: [], truncated: false, scanned: 0 });
  const m = { path: 'world/level.dat', name: 'level.dat', size: 4, is_dir: false, mod_time: '2026-11-29T10:00:00Z' };
  assert.deepEqual(decodeSearch({ matches: [m], truncated: true, scanned: 9 }), { matches: [m], truncated: true, scanned: 9 });
  assert.throws(() => decodeSearch({ code: 'not_found', error: 'nope does not exist' }), FileEditError);
});
