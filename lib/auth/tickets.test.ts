import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { test } from 'node:test';
import { downloadKey, signTicket, verifyTicket } from '../downloads/signing.ts';
import { signUploadTicket, type UploadClaims, uploadKey, verifyUploadTicket } from '../uploads/url-tickets.ts';
import { openTicket, signClaims, ticketKey } from './tickets.ts';

const JOB_KEY = Buffer.alloc(32, 5);
const NOW = Date.UTC(2026, 11, 1, 10, 0, 0);
const EXPIRES = NOW / 1000 + 600;
const upload: UploadClaims = { namespace: 'minecraft', server: 'survival', path: 'plugins', overwrite: false, parents: false, expires: EXPIRES, signer: 'alice', nonce: 'ab'.repeat(16) };

test('each purpose has its own key, and a ticket opens only under its own', () => {
  assert.notDeepEqual(ticketKey(JOB_KEY, 'download'), ticketKey(JOB_KEY, 'upload'));
  const t = signClaims(ticketKey(JOB_KEY, 'upload'), { x: 1 });
  assert.deepEqual(openTicket(ticketKey(JOB_KEY, 'upload'), t), { x: 1 });
  assert.equal(openTicket(ticketKey(JOB_KEY, 'download'), t), undefined);
});

test('a download ticket is never an upload ticket', () => {
  const d = signTicket(downloadKey(JOB_KEY), { namespace: 'minecraft', server: 'survival', path: 'plugins', dir: true, expires: EXPIRES, signer: 'alice' });
  assert.deepEqual(verifyUploadTicket(uploadKey(JOB_KEY), d, 'minecraft', NOW), { ok: false, why: 'invalid' });
  // Even a download-shaped payload with the upload fields, under the download key, is refused: the key decides first.
  const shaped = signClaims(downloadKey(JOB_KEY), { k: 'upload', n: 'minecraft', s: 'survival', p: 'plugins', o: 0, r: 0, e: EXPIRES, a: 'alice', x: upload.nonce });
  assert.deepEqual(verifyUploadTicket(uploadKey(JOB_KEY), shaped, 'minecraft', NOW), { ok: false, why: 'invalid' });
});

test('an upload ticket is never a download ticket, by its key and by its payload', () => {
  const u = signUploadTicket(uploadKey(JOB_KEY), upload);
  assert.deepEqual(verifyTicket(downloadKey(JOB_KEY), u, 'minecraft', NOW), { ok: false, why: 'invalid' });
  // Signed under the download key but naming the upload purpose: still no download.
  const shaped = signClaims(downloadKey(JOB_KEY), { k: 'upload', n: 'minecraft', s: 'survival', p: 'plugins', d: 1, e: EXPIRES, a: 'alice' });
  assert.deepEqual(verifyTicket(downloadKey(JOB_KEY), shaped, 'minecraft', NOW), { ok: false, why: 'invalid' });
});

test('download tickets keep their key derivation: one signed as before still verifies', () => {
  // The key and payload download URLs were always signed with (HMAC of the purpose string; n s p d e a).
  const oldKey = createHmac('sha256', JOB_KEY).update('felis-world download url v1').digest();
  const payload = Buffer.from(JSON.stringify({ n: 'minecraft', s: 'survival', p: 'a.txt', d: 0, e: EXPIRES })).toString('base64url');
  const old = `${payload}.${createHmac('sha256', oldKey).update(payload).digest('base64url')}`;
  assert.deepEqual(verifyTicket(downloadKey(JOB_KEY), old, 'minecraft', NOW), { ok: true, claims: { namespace: 'minecraft', server: 'survival', path: 'a.txt', dir: false, expires: EXPIRES } });
});
