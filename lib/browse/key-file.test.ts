import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { jobToken, MIN_KEY_BYTES } from '../protocol/job-token.ts';
import { ensureJobKeyFile } from './key-file.ts';

test('the job key is generated once, private, and kept across starts', () => {
  const dir = mkdtempSync(join(tmpdir(), 'job-key-'));
  try {
    const file = ensureJobKeyFile(dir);
    const key = readFileSync(file);
    assert.equal(key.length, MIN_KEY_BYTES);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.equal(ensureJobKeyFile(dir), file);
    assert.deepEqual(readFileSync(file), key, 'a second start derives the same tokens');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('tokens differ by Job and by key, and a short key is refused', () => {
  const a = Buffer.alloc(32, 1);
  const b = Buffer.alloc(32, 2);
  assert.match(jobToken(a, 'files-s-b1'), /^[0-9a-f]{64}$/);
  assert.equal(jobToken(a, 'files-s-b1'), jobToken(Buffer.from(a), 'files-s-b1'));
  assert.notEqual(jobToken(a, 'files-s-b1'), jobToken(a, 'files-s-b2'));
  assert.notEqual(jobToken(a, 'files-s-b1'), jobToken(b, 'files-s-b1'));
  assert.throws(() => jobToken(Buffer.alloc(31), 'files-s-b1'), /at least 32 bytes/);
});
