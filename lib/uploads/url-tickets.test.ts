import assert from 'node:assert/strict';
import { test } from 'node:test';
import { signClaims } from '../auth/tickets.ts';
import type { DomainError } from '../errors.ts';
import { claimKeepSeconds, claimOpId, signUploadTicket, type UploadClaims, UploadUrls, uploadKey, verifyUploadTicket } from './url-tickets.ts';

const JOB_KEY = Buffer.alloc(32, 7);
const KEY = uploadKey(JOB_KEY);
const NOW = Date.UTC(2026, 11, 1, 10, 0, 0);
const claims: UploadClaims = {
  namespace: 'minecraft',
  server: 'survival',
  path: 'plugins/ä b',
  overwrite: true,
  parents: false,
  expires: NOW / 1000 + 600,
  signer: 'system:serviceaccount:minecraft:panel',
  nonce: '0123456789abcdef0123456789abcdef',
};

test('a signed upload ticket verifies to its claims on any instance holding the key', () => {
  assert.deepEqual(verifyUploadTicket(uploadKey(Buffer.from(JOB_KEY)), signUploadTicket(KEY, claims), 'minecraft', NOW), { ok: true, claims });
});

test('expired at its second, and not before', () => {
  const t = signUploadTicket(KEY, claims);
  assert.equal(verifyUploadTicket(KEY, t, 'minecraft', claims.expires * 1000 - 1).ok, true);
  assert.deepEqual(verifyUploadTicket(KEY, t, 'minecraft', claims.expires * 1000), { ok: false, why: 'expired' });
});

test('bound to its server, path and flags: any change to the payload, the namespace or the key is invalid', () => {
  const t = signUploadTicket(KEY, claims);
  const sig = t.split('.')[1]!;
  const base = { k: 'upload', n: 'minecraft', s: 'survival', p: claims.path, o: 1, r: 0, e: claims.expires, a: claims.signer, x: claims.nonce };
  const forge = (o: object) => `${Buffer.from(JSON.stringify(o)).toString('base64url')}.${sig}`;
  assert.equal(verifyUploadTicket(KEY, forge(base), 'minecraft', NOW).ok, true);
  for (const changed of [{ s: 'creative' }, { p: 'server.properties' }, { o: 0 }, { r: 1 }, { e: claims.expires + 600 }, { a: 'admin' }, { x: 'f'.repeat(32) }, { n: 'other' }]) {
    assert.deepEqual(verifyUploadTicket(KEY, forge({ ...base, ...changed }), 'minecraft', NOW), { ok: false, why: 'invalid' }, JSON.stringify(changed));
  }
  assert.deepEqual(verifyUploadTicket(KEY, t, 'other-namespace', NOW), { ok: false, why: 'invalid' });
  assert.deepEqual(verifyUploadTicket(uploadKey(Buffer.alloc(32, 8)), t, 'minecraft', NOW), { ok: false, why: 'invalid' });
  for (const junk of ['', '.', 'a.b.c', `${t}x`, t.replace('.', '.!'), 'x'.repeat(9000)]) assert.equal(verifyUploadTicket(KEY, junk, 'minecraft', NOW).ok, false);
});

test('a well-signed payload of the wrong shape is invalid: no purpose, a bad flag, a short nonce, no signer', () => {
  const base = { k: 'upload', n: 'minecraft', s: 'survival', p: 'x', o: 0, r: 0, e: claims.expires, a: 'a', x: claims.nonce };
  for (const bad of [{ k: undefined }, { k: 'download' }, { o: true }, { r: 2 }, { x: 'abc' }, { a: undefined }, { e: 1.5 }]) {
    assert.deepEqual(verifyUploadTicket(KEY, signClaims(KEY, { ...base, ...bad }), 'minecraft', NOW), { ok: false, why: 'invalid' }, JSON.stringify(bad));
  }
});

test('UploadUrls: valid for its configured seconds, at most 15 minutes; refusals are not_found and upload_url_expired', () => {
  let now = NOW;
  const urls = new UploadUrls({ keyFile: '', namespace: 'minecraft', urlSeconds: 600 }, { key: JOB_KEY, now: () => now });
  const { ticket, expiresAt } = urls.sign({ server: 'survival', path: 'a.txt', overwrite: false, parents: true, signer: 'alice' });
  assert.equal(expiresAt.getTime(), NOW + 600_000);
  const c = urls.verify(ticket);
  assert.equal(c.parents, true);
  assert.match(c.nonce, /^[0-9a-f]{32}$/);
  // Two signings never share a nonce, so never a claim.
  assert.notEqual(urls.verify(urls.sign({ server: 'survival', path: 'a.txt', overwrite: false, parents: true, signer: 'alice' }).ticket).nonce, c.nonce);
  assert.throws(
    () => urls.verify('nope'),
    (e: DomainError) => e.code === 'not_found',
  );
  now += 600_000;
  assert.throws(
    () => urls.verify(ticket),
    (e: DomainError) => e.code === 'upload_url_expired',
  );
  assert.throws(() => new UploadUrls({ keyFile: '', namespace: 'minecraft', urlSeconds: 901 }), /900/);
});

test('the claim: one Job name per ticket, kept until the ticket has expired', () => {
  assert.equal(claimOpId(claims.nonce), 'u0123456789abcde');
  assert.match(claimOpId(claims.nonce), /^[0-9a-z]{16}$/);
  // Used at once: kept the whole validity and a minute; used at its last second: still past it.
  assert.equal(claimKeepSeconds(1000, 400), 660);
  assert.equal(claimKeepSeconds(1000, 999), 61);
  assert.ok(claimKeepSeconds(1000, 1200) >= 60);
});
