import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { test } from 'node:test';
import { jobToken } from '../protocol/job-token.ts';
import { type DownloadClaims, downloadKey, signTicket, verifyTicket } from './signing.ts';

const JOB_KEY = Buffer.alloc(32, 3);
const KEY = downloadKey(JOB_KEY);
const NOW = Date.UTC(2026, 11, 1, 10, 0, 0);
const claims: DownloadClaims = { namespace: 'minecraft', server: 'survival', path: 'plugins/ä b.jar', dir: false, expires: NOW / 1000 + 600 };

test('a signed ticket verifies to its claims, on any instance holding the same key', () => {
  const t = signTicket(KEY, claims);
  assert.deepEqual(verifyTicket(downloadKey(Buffer.from(JOB_KEY)), t, 'minecraft', NOW), { ok: true, claims });
});

test('expired at its second, and not before', () => {
  const t = signTicket(KEY, claims);
  assert.equal(verifyTicket(KEY, t, 'minecraft', claims.expires * 1000 - 1).ok, true);
  assert.deepEqual(verifyTicket(KEY, t, 'minecraft', claims.expires * 1000), { ok: false, why: 'expired' });
});

test('any change to server, path, mode, expiry or namespace, or another key, is invalid', () => {
  const t = signTicket(KEY, claims);
  const [payload, sig] = t.split('.') as [string, string];
  const forge = (o: object) => `${Buffer.from(JSON.stringify(o)).toString('base64url')}.${sig}`;
  const base = { n: 'minecraft', s: 'survival', p: claims.path, d: 0, e: claims.expires };
  for (const changed of [
    { ...base, s: 'creative' },
    { ...base, p: 'server.properties' },
    { ...base, d: 1 },
    { ...base, e: claims.expires + 3600 },
    { ...base, n: 'other' },
  ]) {
    assert.deepEqual(verifyTicket(KEY, forge(changed), 'minecraft', NOW), { ok: false, why: 'invalid' });
  }
  // A ticket signed for another namespace is not valid here, even with a good signature.
  assert.equal(verifyTicket(KEY, signTicket(KEY, { ...claims, namespace: 'other' }), 'minecraft', NOW).ok, false);
  assert.equal(verifyTicket(downloadKey(Buffer.alloc(32, 4)), t, 'minecraft', NOW).ok, false);
  // The Job key itself (not the derived one) does not sign downloads.
  const raw = `${payload}.${createHmac('sha256', JOB_KEY).update(payload).digest('base64url')}`;
  assert.equal(verifyTicket(KEY, raw, 'minecraft', NOW).ok, false);
  // A Job token is not a download signature either.
  assert.notEqual(jobToken(JOB_KEY, payload), sig);
});

test('malformed tickets are invalid, never a throw', () => {
  const t = signTicket(KEY, claims);
  for (const bad of ['', '.', 'abc', `${t}.x`, `.${t}`, t.slice(0, -2), `${t}A`, t.replace('.', '.+'), 'x'.repeat(9000), `${Buffer.from('not json').toString('base64url')}.${t.split('.')[1]}`]) {
    assert.equal(verifyTicket(KEY, bad, 'minecraft', NOW).ok, false, bad.slice(0, 40));
  }
  // A well-signed payload of the wrong shape is invalid too.
  const odd = Buffer.from(JSON.stringify({ n: 'minecraft', s: 'survival', p: 1, d: 0, e: 1 })).toString('base64url');
  assert.equal(verifyTicket(KEY, `${odd}.${createHmac('sha256', KEY).update(odd).digest('base64url')}`, 'minecraft', NOW).ok, false);
});

test('a ticket names its signer; one signed before signers were recorded still verifies, naming none', () => {
  const signed = { ...claims, signer: 'system:serviceaccount:minecraft:alice' };
  assert.deepEqual(verifyTicket(KEY, signTicket(KEY, signed), 'minecraft', NOW), { ok: true, claims: signed });
  // The old payload, without `a`, signed with the same key.
  const payload = Buffer.from(JSON.stringify({ n: 'minecraft', s: 'survival', p: 'a', d: 0, e: claims.expires })).toString('base64url');
  const old = `${payload}.${createHmac('sha256', KEY).update(payload).digest('base64url')}`;
  const v = verifyTicket(KEY, old, 'minecraft', NOW);
  assert.equal(v.ok && v.claims.signer, undefined);
  assert.equal(v.ok, true);
  // A signer that is not text is no ticket of ours.
  const bad = Buffer.from(JSON.stringify({ n: 'minecraft', s: 'survival', p: 'a', d: 0, e: claims.expires, a: 7 })).toString('base64url');
  assert.deepEqual(verifyTicket(KEY, `${bad}.${createHmac('sha256', KEY).update(bad).digest('base64url')}`, 'minecraft', NOW), { ok: false, why: 'invalid' });
});
