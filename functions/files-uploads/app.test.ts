import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import type { V1Job } from '@kubernetes/client-node';
import type { FileAccess, RunOptions } from '../../lib/files/gates.ts';
import { withHeldLock } from '../../lib/files/held-lock.ts';
import { contentDigestHeader } from '../../lib/http/content-digest.ts';
import type { ServerApi } from '../../lib/kube/servers.ts';
import { NotStoppedError } from '../../lib/maintenance/errors.ts';
import { PodStreamError } from '../../lib/protocol/pod-stream.ts';
import { RunnerError } from '../../lib/runner/errors.ts';
import { FakeGates, routeKit, TOKEN } from '../../lib/testing/route-kit.ts';
import { notFound, type PodAnswer, type SessionChannel } from '../../lib/uploads/sessions.ts';
import { filesUploads } from './app.ts';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const ID = 'ab'.repeat(16);
const BASE = '/api/v1/servers/survival/files/uploads';

/** The receiver Job that committed, as the session's Jobs are listed once it has ended. */
const OP = 's0123456789abcde';
const committedJob = {
  metadata: {
    name: `files-survival-${OP}`,
    creationTimestamp: new Date('2026-12-01T10:00:00Z'),
    labels: { 'felis.lolicon.best/files-op': OP, 'felis.lolicon.best/files-mode': 'upload' },
    annotations: { 'felis.lolicon.best/files-path': 'plugins/pack.zip' },
  },
  status: { conditions: [{ type: 'Complete', status: 'True', lastTransitionTime: new Date('2026-12-01T10:05:00Z') }] },
} as unknown as V1Job;

/** The lock the fake gates hold while a mutation runs, as the real ones give it (held-lock.ts). */
const LOCK = 'file-write@2026-12-01T10:00:00Z';

/** Fake gates that also give the lock to the code running under them, and count the kept ones. */
class LockingGates extends FakeGates {
  kept = 0;
  override run<T>(server: string, access: FileAccess, fn: () => Promise<T>, opts?: RunOptions): Promise<T> {
    return super.run(server, access, () => withHeldLock({ server, kind: 'file-write', value: LOCK, keep: () => void this.kept++ }, fn), opts);
  }
}

/** A fake session channel: one in-memory session per id, answering as the receiver does. */
function kit(o: { active?: number; listed?: V1Job[]; lostCommit?: boolean } = {}) {
  const gates = new LockingGates();
  const servers = { getServer: async (_ns: string, name: string) => (name === 'survival' ? {} : undefined) } as unknown as ServerApi;
  const k = routeKit(filesUploads, { gates, servers });
  const log: string[] = [];
  /** Every call's path and query, as the receiver gets it. */
  const paths: string[] = [];
  /** Every call: whether it ran in a turn of the world's line, and the lock it carried. */
  const calls: Array<{ call: string; inTurn: boolean; lock: string | undefined }> = [];
  const state = new Map<string, { path: string; size: number; data: Buffer }>();
  const view = (id: string) => {
    const s = state.get(id)!;
    return { id, path: s.path, size: s.size, received: s.data.length, part_max_bytes: 33554432, parts: [] };
  };
  const ans = (status: number, body?: unknown): PodAnswer => ({ status, text: body === undefined ? '' : JSON.stringify(body) });
  const channel: SessionChannel = {
    newId: () => ID,
    active: async () => o.active ?? 0,
    ended: async (_server, id) => (log.push(`ended ${id}`), o.listed ?? [committedJob]),
    start: async (_t, id) => void log.push(`start ${id} locked=${gates.holding}`),
    async call(_server, id, req, _signal, resume) {
      log.push(`${req.method} ${req.path.split('?')[0]}${resume ? ' (may resume)' : ''}`);
      paths.push(req.path);
      calls.push({ call: `${req.method} ${req.path.split('?')[0]}`, inTurn: gates.holding, lock: req.lock?.() });
      const url = new URL(req.path, 'http://x');
      if (url.pathname === '/begin') {
        state.set(id, { path: url.searchParams.get('path')!, size: Number(url.searchParams.get('size')), data: Buffer.alloc(0) });
        return ans(201, view(id));
      }
      const s = state.get(id);
      if (!s) throw notFound();
      if (url.pathname === '/session') return req.method === 'DELETE' ? (state.delete(id), ans(204)) : ans(200, view(id));
      if (url.pathname === '/part') {
        const chunks: Buffer[] = [];
        for await (const c of req.body!.stream as unknown as AsyncIterable<Uint8Array>) chunks.push(Buffer.from(c));
        const b = Buffer.concat(chunks);
        if (Number(url.searchParams.get('offset')) !== s.data.length)
          return ans(409, { code: 'upload_offset_mismatch', error: `the upload holds ${s.data.length} bytes; send the part that starts there` });
        if (sha(b) !== url.searchParams.get('sha256')) return ans(400, { code: 'digest_mismatch', error: 'no' });
        s.data = Buffer.concat([s.data, b]);
        return ans(200, view(id));
      }
      if (url.pathname === '/commit') {
        if (o.lostCommit) throw new RunnerError('upload session call: the connection ended without an answer', { cause: new PodStreamError('the connection ended without an answer') });
        if (url.searchParams.get('overwrite') !== 'true') return ans(200, { code: 'exists', error: `${s.path} already exists` });
        return { ...ans(200, { sha256: sha(s.data), files: 1, bytes: s.data.length }), opId: OP };
      }
      return ans(404, { error: 'not found' });
    },
  };
  k.deps.uploadSessions = channel;
  return { ...k, gates, log, state, paths, calls };
}

const part = (k: ReturnType<typeof kit>, offset: string | null, b: Buffer, headers: Record<string, string> = { 'content-length': String(b.length), 'content-digest': contentDigestHeader(sha(b)) }) =>
  k.app.request(`${BASE}/${ID}${offset === null ? '' : `?offset=${offset}`}`, { method: 'PUT', body: b, headers: { authorization: `Bearer ${TOKEN}`, ...headers } });

test('begin, parts, status, commit: the receiver Job is created under the lock, and the commit is audited', async () => {
  const k = kit();
  const begun = await k.call('POST', `${BASE}?path=plugins%2Fpack.zip`, { size: 6 });
  assert.equal(begun.status, 201, begun.text);
  assert.deepEqual(begun.body, { id: ID, path: 'plugins/pack.zip', size: 6, received: 0, part_max_bytes: 33554432, parts: [] });
  assert.deepEqual(k.log, [`start ${ID} locked=true`, 'POST /begin']);
  assert.equal((await part(k, '0', Buffer.from('abc'))).status, 200);
  const mism = await part(k, '0', Buffer.from('def'));
  assert.equal(mism.status, 409);
  assert.deepEqual(((await mism.json()) as { error: object }).error, {
    code: 'upload_offset_mismatch',
    message: 'the upload holds 3 bytes; send the part that starts there',
    request_id: mism.headers.get('x-request-id'),
  });
  const early = await k.call('POST', `${BASE}/${ID}/commit`, { overwrite: true });
  assert.equal(early.status, 409);
  assert.equal(early.body.error.code, 'upload_incomplete');
  assert.equal((await part(k, '3', Buffer.from('def'))).status, 200);
  const st = await k.call('GET', `${BASE}/${ID}`);
  assert.equal(st.body.received, 6);
  const exists = await k.call('POST', `${BASE}/${ID}/commit`, { overwrite: false });
  assert.equal(exists.status, 409);
  assert.equal(exists.body.error.code, 'file_exists');
  // `{}` is a commit without overwrite, as Felis reads a body without the field.
  const plain = await k.call('POST', `${BASE}/${ID}/commit`, {});
  assert.equal(plain.status, 409, plain.text);
  assert.equal(plain.body.error.code, 'file_exists');
  assert.equal(k.audits().length, 0);
  const done = await k.call('POST', `${BASE}/${ID}/commit`, { overwrite: true });
  // Felis's answer: 202 and the op as the listing shows it, here already placed.
  assert.equal(done.status, 202, done.text);
  assert.deepEqual(done.body, {
    op: { id: ID, op: 'upload', path: 'plugins/pack.zip', state: 'succeeded', started_at: '2026-12-01T10:00:00Z', finished_at: '2026-12-01T10:05:00Z', done: 6, total: 6, files: 1, bytes: 6 },
    sha256: sha(Buffer.from('abcdef')),
  });
  assert.equal(done.headers.get('location'), `/api/v1/servers/survival/files/ops/${ID}`, 'the op is the session');
  const [a] = k.audits();
  assert.equal(a!.action, 'file.upload');
  assert.deepEqual(a!.payload, { overwrite: true, sha256: sha(Buffer.from('abcdef')), size_bytes: 6 });
  assert.ok(k.log.includes('PUT /part (may resume)'), 'a part may start a new receiver for a lost one');
});

test('a commit whose receiver Job cannot be listed answers the op as just started, as Felis does', async () => {
  const k = kit({ listed: [] });
  assert.equal((await k.call('POST', `${BASE}?path=plugins%2Fpack.zip`, { size: 3 })).status, 201);
  assert.equal((await part(k, '0', Buffer.from('abc'))).status, 200);
  const done = await k.call('POST', `${BASE}/${ID}/commit`, { overwrite: true });
  assert.equal(done.status, 202, done.text);
  const { started_at, ...rest } = done.body.op;
  assert.deepEqual(rest, { id: ID, op: 'upload', path: 'plugins/pack.zip', state: 'running', done: 0, total: 0 });
  assert.match(started_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
});

test('begin refusals: bad path, bad size, one session per server, the server running', async () => {
  for (const [url, body, status, code] of [
    [`${BASE}?path=..%2Fa.jar`, { size: 1 }, 400, 'bad_path'],
    [`${BASE}?path=%2F..%2Fa.jar`, { size: 1 }, 400, 'bad_path'],
    [`${BASE}?path=%2F`, { size: 1 }, 400, 'bad_path'],
    [`${BASE}?path=plugins%2F..`, { size: 1 }, 400, 'bad_path'],
    [`${BASE}?path=${'a'.repeat(256)}`, { size: 1 }, 400, 'bad_path'],
    [`${BASE}?path=plugins%2Fevil%E2%80%AErav.jar`, { size: 1 }, 400, 'bad_path'],
    [`${BASE}?path=plugins%2Fbell%07.jar`, { size: 1 }, 400, 'bad_path'],
    [`${BASE}?path=a.jar`, {}, 400, 'bad_request'],
    [`${BASE}?path=a.jar`, { size: -1 }, 400, 'bad_request'],
    [BASE, { size: 1 }, 400, 'bad_request'],
  ] as const) {
    const k = kit();
    const r = await k.call('POST', url, body);
    assert.equal(r.status, status, `${url}: ${r.text}`);
    assert.equal(r.body.error.code, code);
    assert.deepEqual(k.log, [], 'no Job');
  }
  const busy = kit({ active: 1 });
  const r = await busy.call('POST', `${BASE}?path=a.jar`, { size: 1 });
  assert.equal(r.status, 429);
  assert.equal(r.body.error.code, 'too_many_uploads');
  // Every 429 says when to try again; an upload session cannot tell, so the stated default.
  assert.equal(r.headers.get('retry-after'), '30');
  assert.equal(busy.gates.ran.length, 0, 'no lock');
  const running = kit();
  running.gates.enterError = new NotStoppedError('survival');
  assert.equal((await running.call('POST', `${BASE}?path=a.jar`, { size: 1 })).body.error.code, 'not_stopped');
  const commitRunning = kit();
  commitRunning.gates.enterError = new NotStoppedError('survival');
  assert.equal((await commitRunning.call('POST', `${BASE}/${ID}/commit`, { overwrite: true })).body.error.code, 'not_stopped');
});

test('part checks in order: offset, length, digest, then the session', async () => {
  const b = Buffer.from('abc');
  const cases: [string | null, Record<string, string>, number, string][] = [
    [null, {}, 400, 'bad_request'],
    ['x', { 'content-length': '3' }, 400, 'bad_request'],
    ['0', { 'content-digest': contentDigestHeader(sha(b)) }, 411, 'length_required'],
    ['0', { 'content-length': '3' }, 400, 'digest_required'],
    ['0', { 'content-length': '3', 'content-digest': 'sha-256=:abc:' }, 400, 'bad_digest'],
    ['0', { 'content-length': '3', 'content-digest': contentDigestHeader(sha(b)) }, 404, 'upload_not_found'],
  ];
  for (const [offset, headers, status, code] of cases) {
    const k = kit();
    const r = await k.app.request(`${BASE}/${ID}${offset === null ? '' : `?offset=${offset}`}`, { method: 'PUT', headers: { authorization: `Bearer ${TOKEN}`, ...headers } });
    assert.equal(r.status, status, JSON.stringify([offset, headers]));
    assert.equal(((await r.json()) as { error: { code: string } }).error.code, code);
  }
  const k = kit();
  await k.call('POST', `${BASE}?path=a.bin`, { size: 3 });
  const lie = await part(k, '0', b, { 'content-length': '3', 'content-digest': contentDigestHeader(sha(Buffer.from('xyz'))) });
  assert.equal(lie.status, 400);
  assert.equal(((await lie.json()) as { error: { code: string } }).error.code, 'digest_mismatch');
});

test('cancel is 204; an unknown session is 404 for status, cancel, commit; an unknown server 404; unconfigured 503', async () => {
  const k = kit();
  await k.call('POST', `${BASE}?path=a.bin`, { size: 3 });
  const del = await k.app.request(`${BASE}/${ID}`, { method: 'DELETE', headers: { authorization: `Bearer ${TOKEN}` } });
  assert.equal(del.status, 204);
  assert.equal(await del.text(), '');
  for (const [m, p, body] of [
    ['GET', `${BASE}/${ID}`],
    ['DELETE', `${BASE}/${ID}`],
    ['POST', `${BASE}/${ID}/commit`, { overwrite: true }],
  ] as const) {
    const r = await k.call(m, p, body);
    assert.equal(r.status, 404, `${m} ${p}`);
    assert.equal(r.body.error.code, 'upload_not_found');
  }
  assert.equal((await k.call('GET', `/api/v1/servers/nosuch/files/uploads/${ID}`)).body.error.code, 'not_found');
  assert.equal((await k.call('POST', `${BASE}/${ID}/commit`)).body.error.code, 'upload_not_found', 'every commit field is optional: the body may be left out');
  const none = kit();
  none.deps.uploadSessions = undefined;
  const r = await none.call('POST', `${BASE}?path=a.bin`, { size: 1 });
  assert.equal(r.status, 503);
  assert.equal(r.body.error.code, 'files_unavailable');
});

test('begin carries parents=true to the receiver only when asked; any other value is the plain begin', async () => {
  const k = kit();
  assert.equal((await k.call('POST', `${BASE}?path=maps%2Fnew%2Flevel.dat&parents=true`, { size: 3 })).status, 201);
  assert.equal(k.paths.at(-1), '/begin?path=maps%2Fnew%2Flevel.dat&size=3&parents=true');
  for (const v of ['', '&parents=false', '&parents=1', '&parents=TRUE']) {
    k.state.clear();
    assert.equal((await k.call('POST', `${BASE}?path=maps%2Flevel.dat${v}`, { size: 3 })).status, 201, v);
    assert.equal(k.paths.at(-1), '/begin?path=maps%2Flevel.dat&size=3', v);
  }
  // What needs no disk is still refused before any Job, parents or not.
  const outside = await k.call('POST', `${BASE}?path=..%2Fx%2Fa&parents=true`, { size: 3 });
  assert.equal(outside.status, 400);
  assert.equal(outside.body.error.code, 'bad_path');
});

test("every call that changes the world runs in its turn in the world's line and carries the lock to the receiver; the status takes none", async () => {
  const k = kit();
  assert.equal((await k.call('POST', `${BASE}?path=a.bin`, { size: 6 })).status, 201);
  assert.equal((await part(k, '0', Buffer.from('abcdef'))).status, 200);
  assert.equal((await k.call('GET', `${BASE}/${ID}`)).status, 200);
  assert.equal((await k.call('POST', `${BASE}/${ID}/commit`, { overwrite: true })).status, 202);
  assert.equal((await k.call('POST', `${BASE}?path=b.bin`, { size: 1 })).status, 201);
  assert.equal((await k.app.request(`${BASE}/${ID}`, { method: 'DELETE', headers: { authorization: `Bearer ${TOKEN}` } })).status, 204);
  assert.deepEqual(k.calls, [
    { call: 'POST /begin', inTurn: true, lock: LOCK },
    { call: 'PUT /part', inTurn: true, lock: LOCK },
    { call: 'GET /session', inTurn: false, lock: undefined },
    // The commit reads the session in the same turn (a lost receiver is resumed there), then commits.
    { call: 'GET /session', inTurn: true, lock: undefined },
    { call: 'POST /commit', inTurn: true, lock: LOCK },
    { call: 'POST /begin', inTurn: true, lock: LOCK },
    { call: 'DELETE /session', inTurn: true, lock: LOCK },
  ]);
  assert.deepEqual(
    k.gates.ran.map((r) => r.access.op),
    ['upload', 'upload', 'upload', 'upload', 'upload'],
  );
  assert.equal(k.gates.kept, 0, 'every lock given back');
});

test('a part, a cancel or a commit while the server runs is 409 not_stopped: nothing reaches the receiver, no ticket is taken', async () => {
  for (const [m, p, body] of [
    ['PUT', `${BASE}/${ID}?offset=0`, Buffer.from('abc')],
    ['DELETE', `${BASE}/${ID}`],
    ['POST', `${BASE}/${ID}/commit`, { overwrite: true }],
  ] as const) {
    const k = kit();
    k.gates.enterError = new NotStoppedError('survival');
    const headers: Record<string, string> = { authorization: `Bearer ${TOKEN}` };
    if (Buffer.isBuffer(body)) Object.assign(headers, { 'content-length': '3', 'content-digest': contentDigestHeader(sha(body)) });
    else if (body) headers['content-type'] = 'application/json';
    const r = await k.app.request(p, { method: m, headers, ...(body ? { body: Buffer.isBuffer(body) ? body : JSON.stringify(body) } : {}) });
    assert.equal(r.status, 409, `${m} ${p}`);
    assert.equal(((await r.json()) as { error: { code: string } }).error.code, 'not_stopped');
    assert.deepEqual(k.calls, [], `${m}: no call to the receiver`);
    assert.equal(k.gates.ran.length, 0);
  }
});

test('a commit whose answer never came keeps the world held (the file may still be being placed)', async () => {
  const k = kit({ lostCommit: true });
  assert.equal((await k.call('POST', `${BASE}?path=a.bin`, { size: 3 })).status, 201);
  assert.equal((await part(k, '0', Buffer.from('abc'))).status, 200);
  const r = await k.call('POST', `${BASE}/${ID}/commit`, { overwrite: true });
  assert.equal(r.status, 500);
  assert.equal(k.gates.kept, 1, 'the lock is left to lapse');
  assert.equal(k.audits().length, 0);
});
