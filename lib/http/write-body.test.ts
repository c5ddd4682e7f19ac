import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { ApiError } from './envelope.ts';
import { checkWriteBody } from './write-body.ts';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const code = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof ApiError);
    return `${e.status} ${e.code}`;
  }
  return 'ok';
};

test('write body checks in order', () => {
  const c = Buffer.from('hi');
  const b64 = c.toString('base64');
  assert.equal(
    code(() => checkWriteBody({ content_sha256: sha(c) })),
    '400 bad_request',
  );
  assert.equal(
    code(() => checkWriteBody({ content: null, content_sha256: sha(c) })),
    '400 bad_request',
  );
  assert.equal(
    code(() => checkWriteBody({ content: '!!!', content_sha256: sha(c) })),
    '400 bad_request',
  );
  const big = Buffer.alloc(262145);
  assert.equal(
    code(() => checkWriteBody({ content: big.toString('base64') })),
    '413 too_large',
  );
  const exact = Buffer.alloc(262144);
  assert.equal(
    code(() => checkWriteBody({ content: exact.toString('base64'), content_sha256: sha(exact) })),
    'ok',
  );
  for (const bad of ['abc', 'A'.repeat(64), 'a'.repeat(63) + ' ', '--op=list']) {
    assert.equal(
      code(() => checkWriteBody({ content: b64, content_sha256: sha(c), expect_sha256: bad })),
      '400 bad_request',
      bad,
    );
  }
  assert.equal(
    code(() => checkWriteBody({ content: b64, content_sha256: sha(c), expect_sha256: 'a'.repeat(64), create_only: true })),
    '400 bad_request',
  );
  assert.equal(
    code(() => checkWriteBody({ content: b64 })),
    '400 digest_required',
  );
  assert.equal(
    code(() => checkWriteBody({ content: b64, content_sha256: sha(c).toUpperCase() })),
    '400 bad_digest',
  );
  assert.equal(
    code(() => checkWriteBody({ content: b64, content_sha256: sha(Buffer.from('x')) })),
    '400 digest_mismatch',
  );
  assert.equal(
    code(() => checkWriteBody({ content: '', content_sha256: sha(Buffer.alloc(0)) })),
    'ok',
  );
  const ok = checkWriteBody({ content: b64, content_sha256: sha(c), create_only: true });
  assert.deepEqual(ok, { content: c, sha256: sha(c), expectSha256: undefined, createOnly: true });
});
