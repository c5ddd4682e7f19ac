import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FileEditError } from '../../lib/files/errors.ts';
import { decodeContentSearch, decodeSearch } from './result.ts';

test('a search: absent fields are zero (nothing found, not truncated, none scanned); a refusal is its typed error', () => {
  assert.deepEqual(decodeSearch({}), { matches: [], truncated: false, scanned: 0 });
  const m = { path: 'world/level.dat', name: 'level.dat', size: 4, is_dir: false, mod_time: '2026-11-29T10:00:00Z' };
  assert.deepEqual(decodeSearch({ matches: [m], truncated: true, scanned: 9 }), { matches: [m], truncated: true, scanned: 9 });
  assert.throws(() => decodeSearch({ code: 'not_found', error: 'nope does not exist' }), FileEditError);
});

test('a content search: the report decoded field by field; a refusal is its typed error; another shape is an error of ours', () => {
  const m = { path: 'logs/latest.log', line: 3, column: 9, text: 'Steve joined' };
  const report = { matches: [m], truncated: true, scanned_files: 2, scanned_bytes: 99 };
  assert.deepEqual(decodeContentSearch({ report: { ...report, extra: 1 } }), report);
  assert.throws(() => decodeContentSearch({ code: 'not_found', error: 'nope does not exist' }), FileEditError);
  for (const bad of [undefined, {}, { ...report, matches: [{ ...m, line: -1 }] }, { ...report, matches: [{ ...m, text: 1 }] }, { ...report, scanned_bytes: '9' }, { ...report, truncated: 0 }]) {
    assert.throws(() => decodeContentSearch({ report: bad }), /no content search report/, JSON.stringify(bad));
  }
});
