import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { FileEditError } from '../../lib/files/errors.ts';
import { contentDigestHeader } from '../../lib/http/content-digest.ts';
import { ApiError } from '../../lib/http/envelope.ts';
import { MaintenanceBusyError, NotStoppedError } from '../../lib/maintenance/errors.ts';
import { envelopeOf, FakeGates, routeKit, TOKEN } from '../../lib/testing/route-kit.ts';
import type { SingleUpload, UploadChannel } from '../../lib/uploads/receiver.ts';
import { filesUpload, MAX_SINGLE_UPLOAD } from './app.ts';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const URL_ = '/api/v1/servers/survival/files/upload?path=plugins%2Fa.jar';

/** A fake receiver: reads the whole body, hashes it, and checks it as the Pod would. */
function kit(behaviour?: (u: SingleUpload, got: Buffer) => void) {
  const gates = new FakeGates();
  const k = routeKit(filesUpload, { gates });
  const calls: { upload: SingleUpload; body: Buffer; locked: boolean }[] = [];
  const uploads: UploadChannel = {
    async single(_t, u, body) {
      const chunks: Buffer[] = [];
      if (body) for await (const c of body as unknown as AsyncIterable<Uint8Array>) chunks.push(Buffer.from(c));
      const got = Buffer.concat(chunks);
      calls.push({ upload: u, body: got, locked: gates.holding });
      behaviour?.(u, got);
      if (sha(got) !== u.sha256) throw new ApiError(400, 'digest_mismatch', 'the body does not match its Content-Digest');
      return { sha256: sha(got) };
    },
    async form() {
      throw new Error('files.upload sends no form');
    },
  };
  k.deps.uploads = uploads;
  return { ...k, calls };
}

function put(k: ReturnType<typeof kit>, url: string, body: Buffer | null, headers: Record<string, string>) {
  return k.app.request(url, { method: 'PUT', body, headers: { authorization: `Bearer ${TOKEN}`, ...headers } });
}

async function envelope(res: Response) {
  const text = await res.text();
  return envelopeOf({ status: res.status, body: JSON.parse(text), text, headers: res.headers });
}

test('an upload runs under the world lock, streams the body to the receiver, answers and audits it', async () => {
  const k = kit();
  const data = Buffer.from('a plugin jar\n');
  const res = await put(k, `${URL_}&overwrite=true`, data, { 'content-length': String(data.length), 'content-digest': contentDigestHeader(sha(data)) });
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { path: 'plugins/a.jar', status: 'uploaded', sha256: sha(data), size: data.length });
  assert.deepEqual(k.gates.entered, [{ server: 'survival', access: { op: 'upload', path: 'plugins/a.jar' } }]);
  assert.deepEqual(k.gates.ran, [{ server: 'survival', access: { op: 'upload', path: 'plugins/a.jar' } }]);
  assert.equal(k.calls.length, 1);
  assert.equal(k.calls[0]!.locked, true);
  assert.deepEqual(k.calls[0]!.upload, { path: 'plugins/a.jar', size: data.length, sha256: sha(data), overwrite: true });
  assert.deepEqual(k.calls[0]!.body, data);
  const [a] = k.audits();
  assert.equal(a!.action, 'file.upload');
  assert.equal(a!.target, 'survival:plugins/a.jar');
  assert.deepEqual(a!.payload, { overwrite: true, sha256: sha(data), size_bytes: data.length });
});

test('overwrite is on only for exactly "true"', async () => {
  for (const [q, want] of [
    ['', false],
    ['&overwrite=1', false],
    ['&overwrite=TRUE', false],
    ['&overwrite=true', true],
  ] as const) {
    const k = kit();
    const data = Buffer.from('x');
    const res = await put(k, URL_ + q, data, { 'content-length': '1', 'content-digest': contentDigestHeader(sha(data)) });
    assert.equal(res.status, 200);
    assert.equal(k.calls[0]!.upload.overwrite, want, q);
  }
});

test('header refusals, in order, before any lock or Job: length, size, digest', async () => {
  const data = Buffer.from('hello');
  const good = contentDigestHeader(sha(data));
  const cases: [Record<string, string>, number, string][] = [
    [{ 'content-digest': good }, 411, 'length_required'],
    [{ 'content-length': 'abc', 'content-digest': good }, 400, 'bad_request'],
    [{ 'content-length': String(MAX_SINGLE_UPLOAD + 1), 'content-digest': 'nonsense' }, 413, 'too_large'],
    [{ 'content-length': '5' }, 400, 'digest_required'],
    [{ 'content-length': '5', 'content-digest': `sha-512=:${Buffer.alloc(64).toString('base64')}:` }, 400, 'digest_required'],
    [{ 'content-length': '5', 'content-digest': `sha-256=:${sha(data)}:` }, 400, 'bad_digest'],
    [{ 'content-length': '5', 'content-digest': `sha-256=:${Buffer.alloc(31).toString('base64')}:` }, 400, 'bad_digest'],
  ];
  for (const [headers, status, code] of cases) {
    const k = kit();
    // Without a body the runtime sends no Content-Length of its own: the case's header is what counts.
    const res = await k.app.request(URL_, { method: 'PUT', headers: { authorization: `Bearer ${TOKEN}`, ...headers } });
    assert.equal(res.status, status, JSON.stringify(headers));
    assert.equal((await envelope(res)).code, code);
    assert.equal(k.gates.ran.length, 0, 'no lock');
    assert.equal(k.calls.length, 0, 'no Job');
    assert.equal(k.audits().length, 0);
  }
  // Exactly 64 MiB is not refused for its size (it fails later, for its missing digest here).
  const k = kit();
  const edge = await k.app.request(URL_, { method: 'PUT', headers: { authorization: `Bearer ${TOKEN}`, 'content-length': String(MAX_SINGLE_UPLOAD) } });
  assert.equal((await envelope(edge)).code, 'digest_required');
});

test('the gates come first: bad name, path, stopped, busy world, no uploads configured', async () => {
  const data = Buffer.from('x');
  const h = { 'content-length': '1', 'content-digest': contentDigestHeader(sha(data)) };
  const k1 = kit();
  assert.equal((await envelope(await put(k1, '/api/v1/servers/Bad!/files/upload?path=a', data, h))).code, 'bad_name');
  const k2 = kit();
  assert.equal((await envelope(await put(k2, '/api/v1/servers/survival/files/upload', data, h))).code, 'bad_request');
  const k3 = kit();
  assert.equal((await envelope(await put(k3, `/api/v1/servers/survival/files/upload?path=${'a'.repeat(256)}`, data, h))).code, 'bad_path');
  const k4 = kit();
  k4.gates.enterError = new NotStoppedError('survival');
  const r4 = await put(k4, URL_, data, {});
  assert.equal(r4.status, 409);
  assert.equal((await envelope(r4)).code, 'not_stopped', 'the stopped gate comes before the header checks');
  const k5 = kit();
  k5.gates.runError = new MaintenanceBusyError('backup');
  const r5 = await put(k5, URL_, data, h);
  assert.equal((await envelope(r5)).code, 'maintenance_in_progress');
  assert.equal(k5.calls.length, 0);
  const k6 = kit();
  k6.deps.uploads = undefined;
  const r6 = await put(k6, URL_, data, h);
  assert.equal(r6.status, 503);
  assert.equal((await envelope(r6)).code, 'files_unavailable');
});

test("the receiver's refusals reach the caller with their codes and are not audited", async () => {
  const data = Buffer.from('x');
  const h = { 'content-length': '1', 'content-digest': contentDigestHeader(sha(Buffer.from('y'))) };
  const k = kit();
  const r = await put(k, URL_, data, h);
  assert.equal(r.status, 400);
  assert.equal((await envelope(r)).code, 'digest_mismatch');
  for (const [err, status, code] of [
    [new FileEditError('exists', 'plugins/a.jar already exists'), 409, 'file_exists'],
    [new FileEditError('no_space', 'full'), 507, 'volume_full'],
    [new FileEditError('bad_path', 'a folder'), 400, 'bad_path'],
    [new ApiError(400, 'upload_incomplete', 'the upload ended before all 1 bytes arrived'), 400, 'upload_incomplete'],
  ] as const) {
    const kk = kit(() => {
      throw err;
    });
    const res = await put(kk, URL_, data, { 'content-length': '1', 'content-digest': contentDigestHeader(sha(data)) });
    assert.equal(res.status, status);
    assert.equal((await envelope(res)).code, code);
    assert.equal(kk.audits().length, 0);
  }
});

test('a path the name rule refuses (a control or bidirectional control character in any of its names) is 400 bad_path before the lock or any receiver', async () => {
  const data = Buffer.from('x');
  const h = { 'content-length': '1', 'content-digest': contentDigestHeader(sha(data)) };
  for (const p of ['plugins/bell\u0007.jar', 'new\u0085folder/a.jar', 'plugins/evil\u202erav.jar', `plugins/${'n'.repeat(256)}`]) {
    const k = kit();
    const res = await put(k, `/api/v1/servers/survival/files/upload?path=${encodeURIComponent(p)}&parents=true`, data, h);
    assert.equal(res.status, 400, p);
    const e = await envelope(res);
    assert.equal(e.code, 'bad_path', p);
    assert.match(e.message, /control character \(U\+[0-9A-F]{4}\)|longer than 255 bytes/, p);
    assert.equal(k.calls.length, 0, `${p}: no receiver`);
    assert.deepEqual(k.gates.ran, [], `${p}: no lock`);
  }
});

test('a path through one of the ops working names is refused by name, before the lock or any receiver', async () => {
  const data = Buffer.alloc(3 << 20, 7);
  const h = { 'content-length': String(data.length), 'content-digest': contentDigestHeader(sha(data)) };
  for (const p of ['.felis-edit-0123456789ab', 'world/.felis-unzip-0123456789ab/x.bin', '.felis-edit-withheld/ledger', '../x.bin', '/../x']) {
    const k = kit();
    const res = await put(k, `/api/v1/servers/survival/files/upload?path=${encodeURIComponent(p)}`, data, h);
    assert.equal(res.status, 400, p);
    assert.equal((await envelope(res)).code, 'bad_path', p);
    assert.equal(k.calls.length, 0, `${p}: no receiver`);
    assert.deepEqual(k.gates.ran, [], `${p}: no lock`);
  }
  // Only the exact working names: a user's look-alike goes through.
  const k = kit();
  const small = Buffer.from('notes');
  const ok = await put(k, `/api/v1/servers/survival/files/upload?path=.felis-edit-notes.txt`, small, { 'content-length': String(small.length), 'content-digest': contentDigestHeader(sha(small)) });
  assert.equal(ok.status, 200);
});

test('parents=true goes to the receiver with the upload (and into the audit); without it, or with another value, it is not sent', async () => {
  const k = kit();
  const data = Buffer.from('a: 1\n');
  const headers = { 'content-length': String(data.length), 'content-digest': contentDigestHeader(sha(data)) };
  const deep = '/api/v1/servers/survival/files/upload?path=plugins%2FPack%2Fconfig.yml';
  const res = await put(k, `${deep}&parents=true`, data, headers);
  assert.equal(res.status, 200, await res.clone().text());
  assert.deepEqual(await res.json(), { path: 'plugins/Pack/config.yml', status: 'uploaded', sha256: sha(data), size: data.length });
  assert.deepEqual(k.calls[0]!.upload, { path: 'plugins/Pack/config.yml', size: data.length, sha256: sha(data), overwrite: false, parents: true });
  assert.deepEqual(k.audits()[0]!.payload, { overwrite: false, parents: true, sha256: sha(data), size_bytes: data.length });
  for (const v of ['', '&parents=1', '&parents=false']) {
    assert.equal((await put(k, `${deep}${v}`, data, headers)).status, 200, v);
    assert.deepEqual(k.calls.at(-1)!.upload, { path: 'plugins/Pack/config.yml', size: data.length, sha256: sha(data), overwrite: false }, v);
  }
  // An escape is refused before any lock or Job, parents or not.
  const out = await put(k, '/api/v1/servers/survival/files/upload?path=..%2Fx%2Fa&parents=true', data, headers);
  assert.equal(out.status, 400);
  assert.equal((await envelope(out)).code, 'bad_path');
  assert.equal(k.calls.length, 4);
});
