import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { contentDigestHeader, parseContentDigest } from './content-digest.ts';
import { ApiError } from './envelope.ts';

const sum = (s: string) => createHash('sha256').update(s).digest();
const b64 = (s: string) => sum(s).toString('base64');

function code(values: string[]): string {
  try {
    parseContentDigest(values);
    return 'ok';
  } catch (e) {
    assert.ok(e instanceof ApiError);
    assert.equal(e.status, 400);
    return e.code;
  }
}

test('a sha-256 member gives its 32 bytes; any key case, params and other algorithms are ignored', () => {
  assert.deepEqual(parseContentDigest([`sha-256=:${b64('a')}:`]), sum('a'));
  assert.deepEqual(parseContentDigest([`sha-512=:${Buffer.alloc(64).toString('base64')}:, SHA-256=:${b64('a')}:;p=1`]), sum('a'));
  assert.deepEqual(parseContentDigest([` sha-256 = :${b64('a')}: `]), sum('a'));
  assert.deepEqual(parseContentDigest([contentDigestHeader(sum('x').toString('hex'))]), sum('x'));
});

test('the last sha-256 member wins, across members and header values', () => {
  assert.deepEqual(parseContentDigest([`sha-256=:${b64('a')}:`, `sha-256=:${b64('b')}:`]), sum('b'));
  assert.deepEqual(parseContentDigest([`sha-256=:${b64('a')}:, sha-256=:${b64('c')}:`]), sum('c'));
  // A malformed earlier member does not matter once a later one is well formed, and the reverse.
  assert.equal(code([`sha-256=:abc:, sha-256=:${b64('a')}:`]), 'ok');
  assert.equal(code([`sha-256=:${b64('a')}:, sha-256=:abc:`]), 'bad_digest');
});

test('no sha-256 member is digest_required', () => {
  assert.equal(code([]), 'digest_required');
  assert.equal(code(['']), 'digest_required');
  assert.equal(code([`sha-512=:${Buffer.alloc(64).toString('base64')}:`]), 'digest_required');
  assert.equal(code([`:${b64('a')}:`]), 'digest_required');
  assert.equal(code([b64('a')]), 'digest_required');
});

test('a malformed value is bad_digest: hex, missing colons, 31 or 33 bytes, url-safe base64', () => {
  assert.equal(code([`sha-256=${sum('a').toString('hex')}`]), 'bad_digest');
  assert.equal(code([`sha-256=:${sum('a').toString('hex')}:`]), 'bad_digest');
  assert.equal(code([`sha-256=:${b64('a')}`]), 'bad_digest');
  assert.equal(code([`sha-256=${b64('a')}`]), 'bad_digest');
  assert.equal(code([`sha-256=:${Buffer.alloc(31).toString('base64')}:`]), 'bad_digest');
  assert.equal(code([`sha-256=:${Buffer.alloc(33).toString('base64')}:`]), 'bad_digest');
  assert.equal(code([`sha-256=:${Buffer.alloc(32, 0xfb).toString('base64url')}:`]), 'bad_digest');
  assert.equal(code(['sha-256=::']), 'bad_digest');
});
