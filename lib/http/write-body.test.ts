import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { ApiError } from './envelope.ts';
import { checkWriteBody, MAX_WRITE_BODY_BYTES } from './write-body.ts';

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

/** Felis's way: the content in the Job's env. */
const checkEnv = (b: Parameters<typeof checkWriteBody>[0]) => checkWriteBody(b, 'env');

test('write body checks in order', () => {
  const c = Buffer.from('hi');
  const b64 = c.toString('base64');
  assert.equal(
    code(() => checkEnv({ content_sha256: sha(c) })),
    '400 bad_request',
  );
  assert.equal(
    code(() => checkEnv({ content: null, content_sha256: sha(c) })),
    '400 bad_request',
  );
  assert.equal(
    code(() => checkEnv({ content: '!!!', content_sha256: sha(c) })),
    '400 bad_request',
  );
  const big = Buffer.alloc(262145);
  assert.equal(
    code(() => checkEnv({ content: big.toString('base64') })),
    '413 too_large',
  );
  const exact = Buffer.alloc(262144);
  assert.equal(
    code(() => checkEnv({ content: exact.toString('base64'), content_sha256: sha(exact) })),
    'ok',
  );
  for (const bad of ['abc', 'A'.repeat(64), 'a'.repeat(63) + ' ', '--op=list']) {
    assert.equal(
      code(() => checkEnv({ content: b64, content_sha256: sha(c), expect_sha256: bad })),
      '400 bad_request',
      bad,
    );
  }
  assert.equal(
    code(() => checkEnv({ content: b64, content_sha256: sha(c), expect_sha256: 'a'.repeat(64), create_only: true })),
    '400 bad_request',
  );
  assert.equal(
    code(() => checkEnv({ content: b64 })),
    '400 digest_required',
  );
  assert.equal(
    code(() => checkEnv({ content: b64, content_sha256: sha(c).toUpperCase() })),
    '400 bad_digest',
  );
  assert.equal(
    code(() => checkEnv({ content: b64, content_sha256: sha(Buffer.from('x')) })),
    '400 digest_mismatch',
  );
  assert.equal(
    code(() => checkEnv({ content: '', content_sha256: sha(Buffer.alloc(0)) })),
    'ok',
  );
  const ok = checkEnv({ content: b64, content_sha256: sha(c), create_only: true });
  assert.deepEqual(ok, { content: c, sha256: sha(c), expectSha256: undefined, createOnly: true });
});

test('streamed, a write carries up to 1 MiB (what a read shows); in the env, 256 KiB, and its 413 says why', () => {
  const mib = Buffer.alloc(1 << 20, 7);
  const over = Buffer.alloc((1 << 20) + 1, 7);
  assert.equal(checkWriteBody({ content: mib.toString('base64'), content_sha256: sha(mib) }, 'streamed').content.length, 1 << 20);
  assert.throws(
    () => checkWriteBody({ content: over.toString('base64'), content_sha256: sha(over) }, 'streamed'),
    (e: unknown) => e instanceof ApiError && e.status === 413 && e.message === 'content is 1048577 bytes; a write carries at most 1048576 bytes',
  );
  const envOver = Buffer.alloc(262145);
  assert.throws(
    () => checkEnv({ content: envOver.toString('base64'), content_sha256: sha(envOver) }),
    (e: unknown) => e instanceof ApiError && e.status === 413 && /at most 262144 bytes through the Job's environment/.test(e.message) && /with one, 1048576/.test(e.message),
  );
  // The route's JSON body limit takes the largest write, pretty-printed too.
  const body = JSON.stringify({ content: mib.toString('base64'), content_sha256: sha(mib), expect_sha256: 'b'.repeat(64), create_only: false }, null, 2);
  assert.ok(body.length <= MAX_WRITE_BODY_BYTES);
});
