import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FileEditError } from '../../lib/files/errors.ts';
import { decodeUsage } from './result.ts';

const report = {
  path: 'world',
  bytes: 8192,
  apparent_bytes: 5000,
  files: 2,
  dirs: 1,
  children: [{ name: 'region', bytes: 4096, apparent_bytes: 4000, files: 1, is_dir: true, children: [{ name: 'r.0.0.mca', bytes: 4096, apparent_bytes: 4000, files: 1, is_dir: false }] }],
  largest: [{ path: 'world/region/r.0.0.mca', bytes: 4096, apparent_bytes: 4000 }],
  trash_bytes: 12,
  capacity: 1 << 30,
  free: 1 << 20,
  scanned_at: '2026-12-07T12:00:00.000Z',
  truncated: false,
};

test("a usage report decodes to the answer: the volume's figures, null where the Job could not tell", () => {
  const u = decodeUsage({ report });
  assert.equal(u.capacity_bytes, 1 << 30);
  assert.equal(u.free_bytes, 1 << 20);
  assert.deepEqual(u.children, report.children);
  const blind = decodeUsage({ report: { ...report, capacity: -1, free: -1 } });
  assert.deepEqual([blind.capacity_bytes, blind.free_bytes], [null, null]);
});

test('a refusal is its error; a report of another shape is an error of ours, not an answer', () => {
  assert.throws(
    () => decodeUsage({ code: 'not_found', error: 'no such file' }),
    (e: unknown) => e instanceof FileEditError && e.code === 'not_found',
  );
  for (const bad of [undefined, {}, { ...report, bytes: '1' }, { ...report, children: [{ name: 'x' }] }, { ...report, largest: [null] }, { ...report, truncated: 'no' }]) {
    assert.throws(() => decodeUsage({ report: bad }), /no usage report/, JSON.stringify(bad));
  }
});
