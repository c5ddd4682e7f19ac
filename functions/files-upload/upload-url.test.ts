import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { downloadKey, signTicket } from '../../lib/downloads/signing.ts';
import { domainError } from '../../lib/errors.ts';
import { FileEditError } from '../../lib/files/errors.ts';
import { NotStoppedError } from '../../lib/maintenance/errors.ts';
import { envelopeOf, routeKit } from '../../lib/testing/route-kit.ts';
import type { FormUpload, SingleUpload, TicketClaim, UploadChannel } from '../../lib/uploads/receiver.ts';
import { claimOpId, UploadUrls } from '../../lib/uploads/url-tickets.ts';
import { filesUpload, MAX_SINGLE_UPLOAD } from './app.ts';

const JOB_KEY = Buffer.alloc(32, 4);
const NOW = Date.UTC(2026, 11, 1, 10, 0, 0);
const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

/** The routes over fakes: a receiver that reads the whole body, and a signer on a settable clock. */
function kit(o: { formRefusal?: Error; singleError?: Error } = {}) {
  const k = routeKit(filesUpload);
  const clock = { now: NOW };
  const urls = new UploadUrls({ keyFile: '', namespace: 'minecraft', urlSeconds: 600 }, { key: JOB_KEY, now: () => clock.now });
  const calls: { kind: 'single' | 'form'; upload: SingleUpload | FormUpload; body: Buffer; claim?: TicketClaim; locked: boolean }[] = [];
  const read = async (body: unknown) => {
    const chunks: Buffer[] = [];
    if (body) for await (const c of body as AsyncIterable<Uint8Array>) chunks.push(Buffer.from(c));
    return Buffer.concat(chunks);
  };
  const uploads: UploadChannel = {
    async single(_t, u, body, _s, claim) {
      const got = await read(body);
      calls.push({ kind: 'single', upload: u, body: got, ...(claim ? { claim } : {}), locked: k.gates.holding });
      if (o.singleError) throw o.singleError;
      return { sha256: sha(got) };
    },
    async form(_t, f, body, _s, claim) {
      const got = await read(body);
      calls.push({ kind: 'form', upload: f, body: got, claim, locked: k.gates.holding });
      return { files: [{ path: `${f.path}/a.txt`, sha256: sha('a'), size: 1 }], ...(o.formRefusal ? { refusal: o.formRefusal } : {}) };
    },
  };
  k.deps.uploads = uploads;
  k.deps.uploadUrls = urls;
  const sign = async (query: string) => {
    const r = await k.call('POST', `/api/v1/servers/survival/files/upload-url?${query}`);
    assert.equal(r.status, 200, r.text);
    return r.body as { url: string; expires_at: string; max_bytes: number };
  };
  /** No Authorization header: the signature is the credential. */
  const use = (url: string, init: RequestInit) => k.app.request(url, init);
  return { ...k, clock, calls, sign, use };
}

const codeOf = async (r: Response) => envelopeOf({ status: r.status, body: JSON.parse(await r.clone().text()), text: await r.text(), headers: r.headers }).code;

test('signing: gates, then {url, expires_at, max_bytes}; audited as the signer; no Job', async () => {
  const k = kit();
  const s = await k.sign('path=plugins%2Fa.jar&overwrite=true');
  assert.match(s.url, /^\/api\/v1\/uploads\/[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
  assert.equal(s.expires_at, '2026-12-01T10:10:00Z');
  assert.equal(s.max_bytes, MAX_SINGLE_UPLOAD);
  assert.deepEqual(k.gates.entered, [{ server: 'survival', access: { op: 'upload', path: 'plugins/a.jar' } }]);
  assert.equal(k.gates.ran.length, 0);
  assert.equal(k.calls.length, 0);
  const [a] = k.audits();
  assert.equal(a!.action, 'file.upload_url');
  assert.equal(a!.actor, 'bearer');
  assert.deepEqual(a!.payload, { overwrite: true, expires_at: '2026-12-01T10:10:00Z' });
  // The root is a folder a form may go into; an escape or a working name is refused by name.
  assert.equal((await k.call('POST', '/api/v1/servers/survival/files/upload-url?path=.')).status, 200);
  for (const bad of ['../x', '/../etc/passwd', '.felis-edit-0123456789ab/a']) {
    const r = await k.call('POST', `/api/v1/servers/survival/files/upload-url?path=${encodeURIComponent(bad)}`);
    assert.equal(r.status, 400, bad);
    assert.equal(r.body.error.code, 'bad_path');
  }
  assert.equal((await k.call('POST', '/api/v1/servers/survival/files/upload-url')).status, 400);
});

test('signing needs update files like an upload, and the server stopped', async () => {
  const k = kit();
  k.gates.enterError = new NotStoppedError('survival');
  const r = await k.call('POST', '/api/v1/servers/survival/files/upload-url?path=a.txt');
  assert.equal(r.status, 409);
  assert.equal(r.body.error.code, 'not_stopped');
  const unauth = await k.app.request('/api/v1/servers/survival/files/upload-url?path=a.txt', { method: 'POST' });
  assert.equal(unauth.status, 401);
});

test('PUT without a bearer or a digest: under the lock, as the signer, the claim named from the ticket and kept past its expiry', async () => {
  const k = kit();
  const s = await k.sign('path=plugins%2Fa.jar&parents=true');
  k.clock.now += 60_000;
  const res = await k.use(s.url, { method: 'PUT', body: 'hello', headers: { 'content-length': '5' } });
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { path: 'plugins/a.jar', status: 'uploaded', sha256: sha('hello'), size: 5 });
  const [c] = k.calls;
  assert.equal(c!.locked, true);
  assert.deepEqual(c!.upload, { path: 'plugins/a.jar', size: 5, overwrite: false, parents: true });
  const nonce = JSON.parse(Buffer.from(s.url.split('/').pop()!.split('.')[0]!, 'base64url').toString()).x as string;
  // Used a minute after signing: kept the nine minutes left, and a minute more.
  assert.deepEqual(c!.claim, { opId: claimOpId(nonce), keepSeconds: 600 });
  const upload = k.audits().find((a) => a.action === 'file.upload')!;
  assert.equal(upload.actor, 'bearer');
  assert.deepEqual(upload.payload, { overwrite: false, parents: true, sha256: sha('hello'), size_bytes: 5, via: 'upload_url' });
});

test('PUT: a digest given is passed on to be checked; a refusal before the Job leaves the URL unspent', async () => {
  const k = kit();
  const s = await k.sign('path=a.txt');
  const none = await k.use(s.url, { method: 'PUT' });
  assert.equal(none.status, 411);
  const big = await k.use(s.url, { method: 'PUT', headers: { 'content-length': String(MAX_SINGLE_UPLOAD + 1) } });
  assert.equal(big.status, 413);
  assert.equal(k.calls.length, 0);
  const digest = `sha-256=:${createHash('sha256').update('hi').digest('base64')}:`;
  const ok = await k.use(s.url, { method: 'PUT', body: 'hi', headers: { 'content-length': '2', 'content-digest': digest } });
  assert.equal(ok.status, 200);
  assert.equal((k.calls[0]!.upload as SingleUpload).sha256, sha('hi'));
});

test('tickets: tampered, foreign or a download ticket are 404 not_found, expired 410, spent 410; none reaches the gates', async () => {
  const k = kit();
  const s = await k.sign('path=a.txt');
  const [payload, sig] = s.url.split('/').pop()!.split('.') as [string, string];
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
  const forged = `${Buffer.from(JSON.stringify({ ...claims, p: 'server.properties' })).toString('base64url')}.${sig}`;
  const dl = signTicket(downloadKey(JOB_KEY), { namespace: 'minecraft', server: 'survival', path: 'a.txt', dir: false, expires: NOW / 1000 + 600, signer: 'bearer' });
  k.gates.entered.length = 0;
  for (const t of [forged, dl, 'nonsense', `${payload}.${sig}x`]) {
    for (const method of ['PUT', 'POST']) {
      const r = await k.use(`/api/v1/uploads/${t}`, { method, body: 'x', headers: { 'content-length': '1' } });
      assert.equal(r.status, 404, `${method} ${t.slice(0, 20)}`);
      assert.equal(await codeOf(r), 'not_found');
    }
  }
  assert.equal(k.gates.entered.length, 0);
  k.clock.now += 600_000;
  const expired = await k.use(s.url, { method: 'PUT', body: 'x', headers: { 'content-length': '1' } });
  assert.equal(expired.status, 410);
  assert.equal(await codeOf(expired), 'upload_url_expired');
  const used = kit({ singleError: domainError('upload_url_used', 'this upload link was already used; ask for a new one') });
  const u = await used.sign('path=a.txt');
  const r = await used.use(u.url, { method: 'PUT', body: 'x', headers: { 'content-length': '1' } });
  assert.equal(r.status, 410);
  assert.equal(await codeOf(r), 'upload_url_used');
  assert.equal(used.audits().filter((a) => a.action === 'file.upload').length, 0);
});

test('POST: a multipart form goes to the receiver whole with its Content-Type; the placed files are answered and audited', async () => {
  const k = kit();
  const s = await k.sign('path=plugins&overwrite=true');
  const fd = new FormData();
  fd.append('files', new Blob(['a']), 'a.txt');
  const req = new Request('http://x/', { method: 'POST', body: fd });
  const body = Buffer.from(await req.arrayBuffer());
  const type = req.headers.get('content-type')!;
  const res = await k.use(s.url, { method: 'POST', body, headers: { 'content-type': type, 'content-length': String(body.length) } });
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { path: 'plugins', status: 'uploaded', files: [{ path: 'plugins/a.txt', sha256: sha('a'), size: 1 }] });
  const [c] = k.calls;
  assert.equal(c!.kind, 'form');
  assert.equal(c!.locked, true);
  assert.deepEqual(c!.upload, { path: 'plugins', size: body.length, contentType: type, overwrite: true });
  assert.deepEqual(c!.body, body);
  assert.deepEqual(
    k
      .audits()
      .filter((a) => a.action === 'file.upload')
      .map((a) => a.target),
    ['survival:plugins/a.txt'],
  );
});

test('POST: not a form is 400 before the gates; a part refused mid-way answers its error, the files before it audited', async () => {
  const k = kit();
  const s = await k.sign('path=plugins');
  k.gates.entered.length = 0;
  const plain = await k.use(s.url, { method: 'POST', body: 'x', headers: { 'content-type': 'text/plain', 'content-length': '1' } });
  assert.equal(plain.status, 400);
  assert.equal(await codeOf(plain), 'bad_request');
  assert.equal(k.gates.entered.length, 0);
  assert.equal(k.calls.length, 0);
  const m = kit({ formRefusal: new FileEditError('exists', 'plugins/b.txt exists; placed before it, and kept: plugins/a.txt') });
  const t = await m.sign('path=plugins');
  const r = await m.use(t.url, { method: 'POST', body: '--b--\r\n', headers: { 'content-type': 'multipart/form-data; boundary=b', 'content-length': '7' } });
  assert.equal(r.status, 409);
  assert.equal(await codeOf(r), 'file_exists');
  assert.deepEqual(
    m
      .audits()
      .filter((a) => a.action === 'file.upload')
      .map((a) => a.target),
    ['survival:plugins/a.txt'],
  );
});

test('no uploads configured: signing and using are 503 files_unavailable', async () => {
  const k = kit();
  const s = await k.sign('path=a.txt');
  k.deps.uploadUrls = undefined;
  assert.equal((await k.call('POST', '/api/v1/servers/survival/files/upload-url?path=a.txt')).status, 503);
  const r = await k.use(s.url, { method: 'PUT', body: 'x', headers: { 'content-length': '1' } });
  assert.equal(r.status, 503);
});
