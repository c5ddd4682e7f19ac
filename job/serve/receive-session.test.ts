import assert from 'node:assert/strict';
import fs from 'node:fs';
import { request } from 'node:http';
import { test } from 'node:test';
import { jobToken, tokenDigest } from '../../lib/protocol/job-token.ts';
import { lockValue } from '../../lib/protocol/lock-value.ts';
import { SESSION_LOCK_HEADER } from '../../lib/protocol/session-lock.ts';
import { openContext } from '../op-kit/context.ts';
import { makeWorld, sha256, snapshot, tree } from '../testing/world.ts';
import { PART_MAX_BYTES, stagingName } from '../upload/session.ts';
import { endedWith, type SessionReceiving, startSessionReceiving } from './receive-session.ts';

const KEY = Buffer.alloc(32, 5);
const ID = '0123456789abcdef0123456789abcdef';
const TOKEN = jobToken(KEY, 'files-survival-s0001');

interface Answer {
  status: number;
  body: any;
}

/**
 * One call to the receiver. Every call carries a world lock taken just now, as the function's
 * writing calls do (it holds a ticket of the world's line); `lock: null` sends none.
 */
function call(r: SessionReceiving, method: string, path: string, o: { token?: string; body?: Buffer[]; length?: number; cut?: boolean; lock?: string | null } = {}): Promise<Answer> {
  const headers: Record<string, string> = { authorization: `Bearer ${o.token ?? TOKEN}` };
  const lock = o.lock === undefined ? lockValue('file-write', new Date()) : o.lock;
  if (lock !== null) headers[SESSION_LOCK_HEADER] = lock;
  if (o.length !== undefined) headers['content-length'] = String(o.length);
  return new Promise((resolve, reject) => {
    const req = request({ host: r.address.address, port: r.address.port, path, method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : undefined });
      });
    });
    req.on('error', reject);
    void (async () => {
      for (const c of o.body ?? []) {
        req.write(c);
        await new Promise((w) => setTimeout(w, 5));
      }
      if (o.cut) {
        await new Promise((w) => setTimeout(w, 50));
        req.destroy(new Error('cut'));
      } else req.end();
    })();
  });
}

function receiver(root: string, extra: { idleMs?: number; progress?: Array<[number, number]> } = {}) {
  return startSessionReceiving({
    host: '127.0.0.1',
    port: 0,
    tokenSha256: tokenDigest(TOKEN),
    id: ID,
    context: () => openContext(root),
    idleMs: extra.idleMs ?? 60_000,
    lifetimeMs: 60_000,
    progress: (received, size) => extra.progress?.push([received, size]),
  });
}

const part = (r: SessionReceiving, offset: number, b: Buffer, o: { sha?: string; length?: number; cut?: boolean; send?: Buffer; lock?: string | null } = {}) =>
  call(r, 'PUT', `/part?offset=${offset}&size=${o.length ?? b.length}&sha256=${o.sha ?? sha256(b)}`, { body: [o.send ?? b], length: o.length ?? b.length, cut: o.cut, lock: o.lock });

test('begin, parts, a refused part resent, commit: the file lands whole and the staging folder goes', async () => {
  const w = makeWorld();
  const data = Buffer.alloc(3 * 1024 + 17);
  for (let i = 0; i < data.length; i++) data[i] = (i * 31) & 0xff;
  const r = await receiver(w.root);
  const b = await call(r, 'POST', `/begin?path=${encodeURIComponent('plugins/pack.zip')}&size=${data.length}`);
  assert.equal(b.status, 404, 'the parent folder must exist');
  // A refused begin ends the receiver with the refusal as its Result: a failed op in the listing.
  assert.deepEqual(await r.stopped, { reason: 'gone', result: { code: b.body.code, error: b.body.error } });
  const progress: Array<[number, number]> = [];
  const r2 = await receiver(w.root, { progress });
  fs.mkdirSync(w.p('plugins'));
  const begun = await call(r2, 'POST', `/begin?path=${encodeURIComponent('plugins/pack.zip')}&size=${data.length}`);
  assert.equal(begun.status, 201);
  assert.deepEqual(begun.body, { id: ID, path: 'plugins/pack.zip', size: data.length, received: 0, part_max_bytes: PART_MAX_BYTES, parts: [] });
  // The session records its receiver's idle period, so any later sweeper judges it alike.
  assert.equal(JSON.parse(fs.readFileSync(`${w.p(stagingName(ID))}/state.json`, 'utf8')).idle_ms, 60_000);
  assert.ok(fs.statSync(w.p(stagingName(ID))).isDirectory());
  // The staging folder is a working name: a listing does not show it.
  const { execute } = await import('../dispatch/execute.ts');
  const listed = await execute({ op: 'list', path: '', worldsRoot: w.root });
  assert.ok(!listed.entries!.some((e) => e.name.startsWith('.felis-edit-')));

  const p1 = data.subarray(0, 1024);
  const p2 = data.subarray(1024, 2048);
  const p3 = data.subarray(2048);
  assert.equal((await part(r2, 0, p1)).status, 200);
  // Wrong offset, a digest lie, a short part, a part past the size: each refused, nothing kept.
  const mism = await part(r2, 0, p2);
  assert.equal(mism.status, 409);
  assert.deepEqual(mism.body, { code: 'upload_offset_mismatch', error: 'the upload holds 1024 bytes; send the part that starts there' });
  assert.equal((await part(r2, 1024, p2, { sha: sha256(p3) })).body.code, 'digest_mismatch');
  await part(r2, 1024, p2, { send: p2.subarray(0, 100), cut: true }).catch(() => undefined);
  // Until the receiver has seen the cut part end, the session is busy.
  for (let i = 0; i < 50 && (await part(r2, 1024, Buffer.alloc(data.length))).body.code === 'upload_busy'; i++) await new Promise((w2) => setTimeout(w2, 20));
  assert.equal((await part(r2, 1024, Buffer.alloc(data.length))).body.code, 'part_too_large');
  const status = await call(r2, 'GET', '/session');
  assert.equal(status.body.received, 1024);
  assert.equal(fs.statSync(`${w.p(stagingName(ID))}/data`).size, 1024, 'refused parts were cut off');
  const resent = await part(r2, 1024, p2);
  assert.equal(resent.status, 200, JSON.stringify(resent.body));
  const incomplete = await call(r2, 'POST', '/commit');
  assert.equal(incomplete.status, 409);
  assert.equal(incomplete.body.code, 'upload_incomplete');
  const last = await part(r2, 2048, p3);
  assert.deepEqual(last.body.parts, [
    { size: 1024, sha256: sha256(p1) },
    { size: 1024, sha256: sha256(p2) },
    { size: p3.length, sha256: sha256(p3) },
  ]);
  assert.equal((await call(r2, 'POST', `/commit?sha256=${sha256('x')}`)).body.code, 'digest_mismatch');
  const done = await call(r2, 'POST', `/commit?sha256=${sha256(data)}`);
  assert.equal(done.status, 200);
  assert.deepEqual(done.body, { sha256: sha256(data), files: 1, bytes: data.length });
  assert.deepEqual(fs.readFileSync(w.p('plugins/pack.zip')), data);
  assert.deepEqual(await r2.stopped, { reason: 'committed', result: done.body });
  // Progress after the begin and after each accepted part; refused parts report nothing.
  assert.deepEqual(progress, [
    [0, data.length],
    [1024, data.length],
    [2048, data.length],
    [data.length, data.length],
  ]);
  assert.ok(!tree(w.root).some((p) => p.includes('.felis-edit-')), 'no staging left');
});

test('a lost receiver is replaced by one that resumes from the disk, hash and all', async () => {
  const w = makeWorld();
  const data = Buffer.from('abcdefghijklmnopqrstuvwxyz');
  const a = await receiver(w.root);
  assert.equal((await call(a, 'POST', `/begin?path=big.bin&size=${data.length}`)).status, 201);
  assert.equal((await part(a, 0, data.subarray(0, 10))).status, 200);
  a.stop('signal');
  const interrupted = await a.stopped;
  assert.equal(interrupted.reason, 'signal');
  assert.equal(interrupted.result.code, 'upload_interrupted', 'the lost receiver shows as an interrupted op; the session goes on');
  // A part written but not recorded when the Pod died is not part of the session.
  fs.appendFileSync(`${w.p(stagingName(ID))}/data`, 'garbage');
  const progress: Array<[number, number]> = [];
  const b = await receiver(w.root, { progress });
  // Before any call, the new receiver says what the session holds: the op's `done` goes on from there.
  assert.deepEqual(progress, [[10, data.length]]);
  const st = await call(b, 'GET', '/session');
  assert.equal(st.body.received, 10);
  assert.equal((await part(b, 10, data.subarray(10))).status, 200);
  const done = await call(b, 'POST', '/commit');
  assert.deepEqual(done.body, { sha256: sha256(data), files: 1, bytes: data.length });
  assert.equal(fs.readFileSync(w.p('big.bin'), 'utf8'), data.toString());
});

test('commit keeps the upload rules: no overwrite of an existing file unless asked', async () => {
  const w = makeWorld();
  const data = Buffer.from('motd=uploaded\n');
  const r = await receiver(w.root);
  await call(r, 'POST', `/begin?path=server.properties&size=${data.length}`);
  await part(r, 0, data);
  const refused = await call(r, 'POST', '/commit');
  assert.equal(refused.body.code, 'exists');
  assert.equal((await call(r, 'POST', '/commit?overwrite=true')).status, 200);
  assert.equal(fs.readFileSync(w.p('server.properties'), 'utf8'), 'motd=uploaded\n');
});

test('cancel and idle leave nothing behind; an unknown session is 404; the token comes first', async () => {
  const w = makeWorld();
  const before = snapshot(w.root);
  const r = await receiver(w.root);
  assert.equal((await call(r, 'GET', '/session', { token: jobToken(KEY, 'files-survival-s0002') })).status, 401);
  assert.equal((await call(r, 'POST', '/begin?path=a.bin&size=5', { token: tokenDigest(TOKEN) })).status, 401);
  assert.ok(!fs.existsSync(w.p(stagingName(ID))));
  await call(r, 'POST', '/begin?path=a.bin&size=5');
  await part(r, 0, Buffer.from('ab'));
  assert.equal((await call(r, 'DELETE', '/session')).status, 204);
  assert.deepEqual(await r.stopped, { reason: 'cancelled', result: { code: 'upload_cancelled', error: 'the upload was cancelled; nothing was placed' } });
  assert.deepEqual(snapshot(w.root), before);

  const idle = await receiver(w.root, { idleMs: 300 });
  await call(idle, 'POST', '/begin?path=a.bin&size=5');
  await part(idle, 0, Buffer.from('ab'));
  const expired = await idle.stopped;
  assert.equal(expired.reason, 'idle');
  assert.equal(expired.result.code, 'upload_expired');
  assert.deepEqual(snapshot(w.root), before);

  const none = await receiver(w.root);
  const nf = await call(none, 'GET', '/session');
  assert.equal(nf.status, 404);
  assert.equal(nf.body.code, 'upload_not_found');
  assert.deepEqual(await none.stopped, { reason: 'gone', result: { code: 'upload_not_found', error: 'no such upload session' } });
});

test('a receiver clears stale staging folders of other sessions killed long ago, not fresh ones, nor one just past its idle period', async () => {
  const w = makeWorld();
  const staleId = 'f'.repeat(32);
  const freshId = 'e'.repeat(32);
  // Its own receiver, on a node whose clock runs a little behind, may still be serving it.
  const justPastId = 'd'.repeat(32);
  for (const [id, touched] of [
    [staleId, Date.now() - 3_600_000],
    [freshId, Date.now()],
    [justPastId, Date.now() - 60_000 - 10_000],
  ] as const) {
    fs.mkdirSync(w.p(stagingName(id)));
    fs.writeFileSync(`${w.p(stagingName(id))}/data`, 'x');
    fs.writeFileSync(`${w.p(stagingName(id))}/state.json`, JSON.stringify({ id, path: 'x', size: 2, received: 1, parts: [], touched }));
  }
  const r = await receiver(w.root, { idleMs: 60_000 });
  assert.ok(!fs.existsSync(w.p(stagingName(staleId))), 'stale one removed');
  assert.ok(fs.existsSync(w.p(stagingName(freshId))), 'fresh one kept');
  assert.ok(fs.existsSync(w.p(stagingName(justPastId))), 'one 10 s past its idle period is left to its receiver for a minute more');
  r.stop();
  await r.stopped;
});

test('a writing call without a world lock that holds now is refused and changes nothing; a status call needs none', async () => {
  const w = makeWorld();
  const before = snapshot(w.root);
  // A begin without a lock: refused, no folder, and the receiver (which has nothing to serve) ends saying why.
  const r = await receiver(w.root);
  const unlocked = await call(r, 'POST', '/begin?path=a.bin&size=3', { lock: null });
  assert.equal(unlocked.status, 409);
  assert.equal(unlocked.body.code, 'maintenance_in_progress');
  assert.deepEqual(snapshot(w.root), before, 'no staging folder');
  const ended = await r.stopped;
  assert.equal(ended.reason, 'gone');
  assert.equal(ended.result.code, 'maintenance_in_progress');

  const r2 = await receiver(w.root);
  assert.equal((await call(r2, 'POST', '/begin?path=a.bin&size=3')).status, 201);
  const data = Buffer.from('abc');
  const at = (ms: number) => lockValue('file-write', new Date(Date.now() + ms));
  // None, lapsed as far as a call may use it (the grace less 30 s), dated ahead as far, another kind, garbage.
  for (const lock of [null, at(-95_000), at(95_000), lockValue('config-write', new Date()), lockValue('backup', new Date()), 'file-write', '']) {
    const a = await part(r2, 0, data, { lock });
    assert.equal(a.status, 409, String(lock));
    assert.equal(a.body.code, 'maintenance_in_progress', String(lock));
  }
  assert.equal(fs.statSync(`${w.p(stagingName(ID))}/data`).size, 0, 'no byte written');
  const st = await call(r2, 'GET', '/session', { lock: null });
  assert.equal(st.status, 200, 'a status call only reads');
  assert.equal(st.body.received, 0);
  assert.equal((await part(r2, 0, data, { lock: at(-50_000) })).status, 200, 'a lock 50 s old still holds');
  assert.equal((await call(r2, 'POST', '/commit', { lock: null })).body.code, 'maintenance_in_progress');
  assert.ok(!fs.existsSync(w.p('a.bin')), 'nothing placed');
  assert.equal((await call(r2, 'DELETE', '/session', { lock: null })).body.code, 'maintenance_in_progress');
  assert.ok(fs.existsSync(w.p(stagingName(ID))), 'not cancelled');
  const done = await call(r2, 'POST', '/commit');
  assert.equal(done.status, 200, JSON.stringify(done.body));
  assert.deepEqual(fs.readFileSync(w.p('a.bin')), data);
  await r2.stopped;
});

test('the idle period runs from the last accepted part, as a sweep judges the session: status and refused calls do not keep the receiver past it', async () => {
  const w = makeWorld();
  const idleMs = 2_000;
  const r = await receiver(w.root, { idleMs });
  assert.equal((await call(r, 'POST', '/begin?path=a.bin&size=6')).status, 201);
  assert.equal((await part(r, 0, Buffer.from('abc'))).status, 200);
  const touched = JSON.parse(fs.readFileSync(`${w.p(stagingName(ID))}/state.json`, 'utf8')).touched as number;
  await new Promise((res) => setTimeout(res, 1_500));
  // Calls that change nothing: a status, a part at the wrong offset, an early commit.
  assert.equal((await call(r, 'GET', '/session')).status, 200);
  assert.equal((await part(r, 0, Buffer.from('abc'))).body.code, 'upload_offset_mismatch');
  assert.equal((await call(r, 'POST', '/commit')).body.code, 'upload_incomplete');
  const ended = await withTimeout(r.stopped, 10_000);
  const at = Date.now();
  assert.notEqual(ended, 'timeout');
  assert.equal((ended as { reason: string }).reason, 'idle');
  // A sweep past the idle period (and its margin) removes the folder of a session nobody serves any
  // more: had those calls kept the receiver serving for 2 s after them, a mutation could have swept
  // the folder of a session still being served.
  assert.ok(at - touched < idleMs + 700, `ended ${at - touched} ms after its last part, not ${idleMs} ms after the last call`);
  assert.ok(!fs.existsSync(w.p(stagingName(ID))), 'the receiver removed it itself');
});

test('a receiver stopped before its session began shows why, and nothing it says reads as a placed file', () => {
  assert.equal(endedWith('lifetime', false, 1000).code, 'upload_not_found');
  assert.equal(endedWith('lifetime', true, 1000).code, 'upload_interrupted');
  assert.equal(endedWith('idle', true, 1_800_000).error, 'no call came for 1800 s, so the upload was dropped; nothing was placed');
  for (const reason of ['idle', 'lifetime', 'signal', 'cancelled', 'gone'] as const) {
    for (const begun of [false, true]) assert.ok(endedWith(reason, begun, 1000).code, `${reason} has a code, so the listing shows a failed op`);
  }
});

test('a refused call does not hold the idle clock: the receiver still ends when nothing more comes', async () => {
  const w = makeWorld();
  const r = await receiver(w.root, { idleMs: 300 });
  assert.equal((await call(r, 'POST', '/begin?path=a.bin&size=5')).status, 201);
  assert.equal((await call(r, 'POST', '/begin?path=a.bin')).status, 400, 'no size');
  assert.equal((await call(r, 'PUT', '/part?offset=0', { length: 0 })).status, 400, 'no size or digest');
  assert.equal((await call(r, 'GET', '/nowhere')).status, 404);
  const t = performance.now();
  const ended = await Promise.race([r.stopped, new Promise<undefined>((res) => setTimeout(() => res(undefined), 5_000))]);
  assert.equal(ended?.reason, 'idle', 'it ended by itself, idle');
  assert.ok(performance.now() - t < 2_000);
});

// ---- The world is hostile: whatever is planted in or instead of the staging folder ----

const TAMPERED = 'upload_staging_tampered';

/** A file outside the world that nothing of the session may touch: its mode, content and owner. */
function victim(w: ReturnType<typeof makeWorld>) {
  const p = `${w.outside}/victim.txt`;
  fs.writeFileSync(p, 'victim-content\n', { mode: 0o600 });
  fs.chmodSync(p, 0o600);
  const look = () => {
    const st = fs.statSync(p);
    return { mode: st.mode & 0o7777, uid: st.uid, content: fs.readFileSync(p, 'utf8') };
  };
  return { p, before: look(), look };
}

const withTimeout = <T>(p: Promise<T>, ms = 5_000): Promise<T | 'timeout'> => Promise.race([p, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), ms).unref())]);

test('a symlink planted at <staging>/data: the part is refused as tampering, the file outside is untouched, nothing is placed', async () => {
  const w = makeWorld();
  const v = victim(w);
  const data = Buffer.from('0123456789');
  const r = await receiver(w.root);
  assert.equal((await call(r, 'POST', `/begin?path=up.bin&size=${data.length}`)).status, 201);
  const staging = w.p(stagingName(ID));
  fs.rmSync(`${staging}/data`);
  fs.symlinkSync(v.p, `${staging}/data`);
  const a = await withTimeout(part(r, 0, data));
  assert.notEqual(a, 'timeout');
  assert.equal((a as Answer).status, 409);
  assert.equal((a as Answer).body.code, TAMPERED);
  const c = await withTimeout(call(r, 'POST', '/commit').catch(() => 'refused' as const));
  assert.ok(c === 'timeout' || c === 'refused' || c.body?.code !== undefined, 'no commit succeeds');
  const ended = await withTimeout(r.stopped);
  assert.notEqual(ended, 'timeout');
  assert.equal((ended as { result: { code?: string } }).result.code, TAMPERED);
  assert.deepEqual(v.look(), v.before, 'the file outside the world is as it was');
  assert.ok(!fs.existsSync(w.p('up.bin')), 'nothing placed');
  assert.ok(!fs.lstatSync(staging, { throwIfNoEntry: false }), 'the tampered session is gone');
});

test('a symlink planted at state.json.tmp or state.json: the part is refused, nothing outside is written', async () => {
  for (const name of ['state.json.tmp', 'state.json']) {
    const w = makeWorld();
    const v = victim(w);
    const data = Buffer.from('abc');
    const r = await receiver(w.root);
    assert.equal((await call(r, 'POST', `/begin?path=up.bin&size=${data.length}`)).status, 201);
    const staging = w.p(stagingName(ID));
    fs.rmSync(`${staging}/${name}`, { force: true });
    fs.symlinkSync(v.p, `${staging}/${name}`);
    const a = await withTimeout(part(r, 0, data));
    assert.notEqual(a, 'timeout');
    assert.equal((a as Answer).body.code, TAMPERED, name);
    assert.deepEqual(v.look(), v.before, `${name}: the file outside the world is as it was`);
    await withTimeout(r.stopped);
  }
});

test('a hard link to the withheld file as <staging>/data, state edited, resumed: refused; its digest is never answered, it is not chowned or chmodded', async () => {
  const w = makeWorld();
  const secret = w.p('config/paper-global.yml');
  fs.chmodSync(secret, 0o600);
  const secretBytes = fs.readFileSync(secret);
  const before = fs.statSync(secret);
  const a = await receiver(w.root);
  assert.equal((await call(a, 'POST', `/begin?path=leak.yml&size=${secretBytes.length}`)).status, 201);
  a.stop('signal');
  await a.stopped;
  const staging = w.p(stagingName(ID));
  fs.rmSync(`${staging}/data`);
  fs.linkSync(secret, `${staging}/data`);
  const st = JSON.parse(fs.readFileSync(`${staging}/state.json`, 'utf8'));
  fs.writeFileSync(`${staging}/state.json`, JSON.stringify({ ...st, received: secretBytes.length, parts: [{ size: secretBytes.length, sha256: sha256(secretBytes) }] }));
  const b = await receiver(w.root);
  const seen = await call(b, 'GET', '/session');
  assert.equal(seen.status, 409);
  assert.equal(seen.body.code, TAMPERED);
  const c = await withTimeout(call(b, 'POST', '/commit?overwrite=true').catch(() => 'refused' as const));
  assert.ok(c === 'timeout' || c === 'refused' || c.body?.sha256 !== sha256(secretBytes), "the secret's digest is never answered");
  const ended = await withTimeout(b.stopped);
  assert.equal((ended as { result: { code?: string } }).result.code, TAMPERED);
  assert.ok(!fs.existsSync(w.p('leak.yml')), 'nothing placed');
  const after = fs.statSync(secret);
  assert.deepEqual([after.mode & 0o7777, after.uid, after.gid], [before.mode & 0o7777, before.uid, before.gid], 'not chmodded or chowned');
  assert.deepEqual(fs.readFileSync(secret), secretBytes);
});

test('a hard link planted as data in a live session: the commit is refused and the linked file keeps its owner and mode', async () => {
  const w = makeWorld();
  const secret = w.p('config/paper-global.yml');
  fs.chmodSync(secret, 0o600);
  const secretBytes = fs.readFileSync(secret);
  const before = fs.statSync(secret);
  const r = await receiver(w.root);
  assert.equal((await call(r, 'POST', `/begin?path=leak.yml&size=${secretBytes.length}`)).status, 201);
  assert.equal((await part(r, 0, Buffer.alloc(secretBytes.length, 0x61))).status, 200);
  const staging = w.p(stagingName(ID));
  fs.rmSync(`${staging}/data`);
  fs.linkSync(secret, `${staging}/data`);
  const c = await withTimeout(call(r, 'POST', '/commit'));
  assert.notEqual(c, 'timeout');
  assert.equal((c as Answer).body.code, TAMPERED);
  assert.notEqual((c as Answer).body.sha256, sha256(secretBytes));
  await withTimeout(r.stopped);
  assert.ok(!fs.existsSync(w.p('leak.yml')));
  const after = fs.statSync(secret);
  assert.deepEqual([after.mode & 0o7777, after.uid, after.gid, after.nlink], [before.mode & 0o7777, before.uid, before.gid, 1]);
});

test('a FIFO or a socket planted as data: refused at once, no hang', async () => {
  const { execFileSync } = await import('node:child_process');
  const net = await import('node:net');
  for (const kind of ['fifo', 'socket', 'fifo-resumed'] as const) {
    const w = makeWorld();
    const data = Buffer.from('hello');
    const r = await receiver(w.root);
    assert.equal((await call(r, 'POST', `/begin?path=up.bin&size=${data.length}`)).status, 201);
    const staging = w.p(stagingName(ID));
    fs.rmSync(`${staging}/data`);
    let srv: import('node:net').Server | undefined;
    if (kind === 'socket') {
      srv = net.createServer();
      await new Promise<void>((res) => srv!.listen(`${staging}/data`, res));
    } else execFileSync('mkfifo', [`${staging}/data`]);
    try {
      let target = r;
      if (kind === 'fifo-resumed') {
        r.stop('signal');
        await r.stopped;
        target = (await withTimeout(receiver(w.root))) as SessionReceiving;
        assert.notEqual(target, 'timeout', 'a resumed receiver does not hang on the FIFO');
        const s = await withTimeout(call(target, 'GET', '/session'));
        assert.notEqual(s, 'timeout');
        assert.equal((s as Answer).body.code, TAMPERED, kind);
      } else {
        const a = await withTimeout(part(target, 0, data));
        assert.notEqual(a, 'timeout', `${kind}: no hang`);
        assert.equal((a as Answer).body.code, TAMPERED, kind);
      }
      const ended = await withTimeout(target.stopped);
      assert.equal((ended as { result: { code?: string } }).result.code, TAMPERED, kind);
      assert.ok(!fs.existsSync(w.p('up.bin')));
    } finally {
      srv?.close();
    }
  }
});

test('the staging folder swapped for a link to a folder elsewhere: refused; nothing there is written', async () => {
  const w = makeWorld();
  const data = Buffer.from('0123456789');
  const r = await receiver(w.root);
  assert.equal((await call(r, 'POST', `/begin?path=up.bin&size=${data.length}`)).status, 201);
  const staging = w.p(stagingName(ID));
  // The attacker's copy of the folder, outside the world, and our folder moved aside.
  const elsewhere = `${w.outside}/elsewhere`;
  fs.cpSync(staging, elsewhere, { recursive: true });
  fs.renameSync(staging, `${w.outside}/moved-aside`);
  fs.symlinkSync(elsewhere, staging);
  const snap = snapshot(elsewhere);
  const a = await withTimeout(part(r, 0, data));
  assert.notEqual(a, 'timeout');
  assert.equal((a as Answer).body.code, TAMPERED);
  await withTimeout(r.stopped);
  assert.deepEqual(snapshot(elsewhere), snap, 'the folder elsewhere is as it was');
  assert.ok(fs.lstatSync(staging).isSymbolicLink(), 'the planted link is left alone, its target untouched');
  assert.ok(!fs.existsSync(w.p('up.bin')));

  // A real folder of someone else's put in its place is not ours either.
  const w2 = makeWorld();
  const r2 = await receiver(w2.root);
  assert.equal((await call(r2, 'POST', `/begin?path=up.bin&size=${data.length}`)).status, 201);
  const st2 = w2.p(stagingName(ID));
  fs.renameSync(st2, `${w2.outside}/moved-aside`);
  fs.cpSync(`${w2.outside}/moved-aside`, st2, { recursive: true });
  const a2 = await withTimeout(part(r2, 0, data));
  assert.equal((a2 as Answer).body?.code, TAMPERED);
  await withTimeout(r2.stopped);
  assert.ok(!fs.existsSync(w2.p('up.bin')));
});

test('progress arrives: the begin and each of two quick 4 MiB parts print the bytes received before they are answered, before any result', async () => {
  const { runReceive } = await import('./receive-run.ts');
  const { lastProgress, PROGRESS_PREFIX, RESULT_PREFIX } = await import('../../lib/protocol/result.ts');
  const w = makeWorld();
  let out = '';
  let err = '';
  let r!: SessionReceiving;
  let stop!: () => void;
  const env = { FELIS_POD_IP: '127.0.0.1', FELIS_SERVE_PORT: '0', FELIS_SERVE_TOKEN_SHA256: tokenDigest(TOKEN), FELIS_UPLOAD_SESSION: ID };
  const exit = runReceive(w.root, env, { stdout: (t) => void (out += t), stderr: (t) => void (err += t) }, { onSession: (s) => (r = s), onSignal: (s) => (stop = s) });
  for (let i = 0; i < 200 && !r; i++) await new Promise((res) => setTimeout(res, 10));
  assert.ok(r, err);
  const MiB4 = Buffer.alloc(4 << 20, 7);
  try {
    assert.equal((await call(r, 'POST', `/begin?path=big.bin&size=${12 << 20}`)).status, 201);
    assert.deepEqual(lastProgress(out), { done: 0, total: 12 << 20 });
    assert.equal((await part(r, 0, MiB4)).status, 200);
    // Printed before the part is answered: a caller that has the answer finds the op counting it.
    assert.deepEqual(lastProgress(out), { done: 4 << 20, total: 12 << 20 });
    assert.equal((await part(r, 4 << 20, MiB4)).status, 200);
    assert.deepEqual(lastProgress(out), { done: 8 << 20, total: 12 << 20 });
  } finally {
    stop();
  }
  assert.equal(await exit, 0);
  const lines = out.trimEnd().split('\n');
  assert.ok(lines.at(-1)!.startsWith(RESULT_PREFIX), 'the result comes last');
  assert.ok(lines.slice(0, -1).every((l) => l.startsWith(PROGRESS_PREFIX)));
});

test('a session begun with parents=true makes the folders at the begin, and again at the commit should they have gone', async () => {
  const w = makeWorld();
  const data = Buffer.from('level-name=world\n');
  const r = await receiver(w.root);
  const begun = await call(r, 'POST', `/begin?path=${encodeURIComponent('maps/new/level.dat')}&size=${data.length}&parents=true`);
  assert.equal(begun.status, 201, JSON.stringify(begun.body));
  assert.deepEqual(begun.body.path, 'maps/new/level.dat');
  assert.ok(fs.statSync(w.p('maps/new')).isDirectory(), 'made at the begin');
  assert.equal((await part(r, 0, data)).status, 200);
  // Something removed the folders meanwhile: the commit makes them again, as the caller asked.
  fs.rmSync(w.p('maps'), { recursive: true });
  const done = await call(r, 'POST', `/commit?sha256=${sha256(data)}`);
  assert.equal(done.status, 200, JSON.stringify(done.body));
  assert.deepEqual(fs.readFileSync(w.p('maps/new/level.dat')), data);
  await r.stopped;

  // A parent that is a file refuses the begin with bad_path, and makes nothing.
  const r2 = await receiver(w.root);
  const refused = await call(r2, 'POST', `/begin?path=${encodeURIComponent('server.properties/x/a.dat')}&size=1&parents=true`);
  assert.equal(refused.status, 400);
  assert.equal(refused.body.code, 'bad_path');
  await r2.stopped;
  // Without parents a missing folder is still 404, and nothing is made.
  const r3 = await receiver(w.root);
  const missing = await call(r3, 'POST', `/begin?path=${encodeURIComponent('other/a.dat')}&size=1`);
  assert.equal(missing.status, 404);
  assert.equal(fs.existsSync(w.p('other')), false);
  await r3.stopped;
});

test('a call no route takes is judged as a status call: without a session it ends the receiver; with one it is 404 and the session goes on', async () => {
  const w = makeWorld();
  const empty = await receiver(w.root);
  const a = await call(empty, 'GET', '/nowhere');
  assert.deepEqual([a.status, a.body.code], [404, 'upload_not_found']);
  assert.equal((await empty.stopped).reason, 'gone');

  const r = await receiver(w.root);
  try {
    assert.equal((await call(r, 'POST', '/begin?path=a.bin&size=4')).status, 201);
    for (const [method, path] of [
      ['GET', '/nowhere'],
      ['GET', '/part'],
      ['PUT', '/session'],
    ]) {
      const b = await call(r, method, path);
      assert.deepEqual([b.status, b.body], [404, { error: 'not found' }], `${method} ${path}`);
    }
    assert.equal((await call(r, 'GET', '/session')).body.received, 0, 'the session goes on');
  } finally {
    r.stop();
    await r.stopped;
  }
});
