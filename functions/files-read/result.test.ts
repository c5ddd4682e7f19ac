import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { ReadDamagedError } from '../../lib/files/errors.ts';
import { decodeRead } from './result.ts';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

test('a read must hash to content_sha256; an empty file is empty bytes', () => {
  const bytes = Buffer.from('hello');
  const ok = decodeRead({ content: bytes.toString('base64'), sha256: 'disk', content_sha256: sha(bytes) });
  assert.deepEqual(ok.content, bytes);
  assert.equal(ok.sha256, 'disk');
  assert.throws(() => decodeRead({ content: bytes.toString('base64'), sha256: 'disk', content_sha256: sha(Buffer.from('x')) }), ReadDamagedError);
  assert.throws(() => decodeRead({ content: bytes.toString('base64'), sha256: 'disk' }), ReadDamagedError);
  const empty = decodeRead({ sha256: sha(Buffer.alloc(0)), content_sha256: sha(Buffer.alloc(0)) });
  assert.equal(empty.content.length, 0);
});
