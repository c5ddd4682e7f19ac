import assert from 'node:assert/strict';
import fs from 'node:fs';
import { request } from 'node:http';
import { test } from 'node:test';
import { jobToken, tokenDigest } from '../../lib/protocol/job-token.ts';
import { RESULT_PREFIX } from '../../lib/protocol/result.ts';
import { runCli } from '../cli.ts';
import { MAX_WRITE_BYTES } from '../runtime/types.ts';
import { makeWorld, SECRET_TEXT, sha256, snapshot, tree } from '../testing/world.ts';
import { startWriteReceiving, type WriteReceiving } from './receive-write.ts';

const KEY = Buffer.alloc(32, 5);
const TOKEN = jobToken(KEY, 'files-survival-0123456789abcdef');
const DIGEST = tokenDigest(TOKEN);

interface Answer {
  status: number;
  body: string;
}

/** One PUT; `cut` sends that many bytes of the body and then breaks the connection. */
function put(a: { address: string; port: number }, body: Buffer, o: { token?: string | null; path?: string; method?: string; length?: number | null; cut?: number } = {}): Promise<Answer | 'cut'> {
  const headers: Record<string, string> = {};
  if (o.token !== null) headers.authorization = `Bearer ${o.token ?? TOKEN}`;
  if (o.length !== null) headers['content-length'] = String(o.length ?? body.length);
  return new Promise((resolve, reject) => {
    const req = request({ host: a.address, port: a.port, path: o.path ?? '/content', method: o.method ?? 'PUT', headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, body: Buffer.concat(chunks).toString() }));
    });
    if (o.cut !== undefined) {
      req.on('error', () => resolve('cut'));
      req.write(body.subarray(0, o.cut), () => setTimeout(() => req.destroy(), 30));
      return;
    }
    req.on('error', reject);
    // Without a length the body goes chunked (written before the end, so Node does not count it).
    if (o.length === null) {
      req.write(body);
      req.end();
    } else req.end(body);
  });
}

function receiver(extra: Partial<Parameters<typeof startWriteReceiving>[0]> = {}): Promise<WriteReceiving> {
  return startWriteReceiving({ host: '127.0.0.1', port: 0, tokenSha256: DIGEST, maxBytes: MAX_WRITE_BYTES, idleMs: 60_000, lifetimeMs: 60_000, ...extra });
}

test('a wrong or missing token is 401 before anything else; the receiver still waits for its body', async () => {
  const r = await receiver();
  const body = Buffer.from('hello');
  for (const token of [null, 'nope', jobToken(KEY, 'files-survival-fedcba9876543210')]) {
    const a = await put(r.address, body, { token, path: token === null ? '/elsewhere' : '/content', method: token === null ? 'GET' : 'PUT' });
    assert.deepEqual(a, { status: 401, body: '{"error":"unauthorized"}' });
  }
  assert.equal(((await put(r.address, body, { path: '/upload' })) as Answer).status, 404);
  assert.equal(((await put(r.address, body, { method: 'POST' })) as Answer).status, 405);
  const ok = await put(r.address, body);
  assert.deepEqual(ok, { status: 200, body: '{"received":5}' });
  const s = await r.stopped;
  assert.equal(s.reason, 'received');
  assert.deepEqual(s.content, body);
});

test('a body over 1 MiB is 413 before it is read, one without Content-Length 411; exactly 1 MiB is taken', async () => {
  assert.equal(MAX_WRITE_BYTES, 1 << 20);
  const r = await receiver();
  const over = await put(r.address, Buffer.alloc(MAX_WRITE_BYTES + 1, 1));
  assert.equal(over !== 'cut' && over.status, 413);
  const chunked = await put(r.address, Buffer.from('x'), { length: null });
  assert.equal(chunked !== 'cut' && chunked.status, 411);
  const edge = Buffer.alloc(MAX_WRITE_BYTES, 2);
  assert.deepEqual(await put(r.address, edge), { status: 200, body: `{"received":${MAX_WRITE_BYTES}}` });
  assert.deepEqual((await r.stopped).content, edge);
});

test('a body cut off is dropped whole; a retry delivers; after one body nothing more is taken', async () => {
  const r = await receiver();
  const body = Buffer.alloc(100_000, 7);
  assert.equal(await put(r.address, body, { cut: 40_000 }), 'cut');
  await new Promise((w) => setTimeout(w, 30));
  assert.deepEqual(await put(r.address, body), { status: 200, body: '{"received":100000}' });
  const s = await r.stopped;
  assert.deepEqual(s.content, body);
  // Stopped: a second body finds nobody listening.
  await assert.rejects(put(r.address, Buffer.from('again')), /ECONNREFUSED/);
});

test('without a whole body it stops at its idle end with no content', async () => {
  const r = await receiver({ idleMs: 150 });
  assert.equal(await put(r.address, Buffer.alloc(1000), { cut: 10 }), 'cut');
  const s = await r.stopped;
  assert.equal(s.reason, 'idle');
  assert.equal(s.content, undefined);
});

const io = () => {
  const o = { out: '', err: '' };
  return { o, io: { stdout: (t: string) => void (o.out += t), stderr: (t: string) => void (o.err += t) } };
};
const ENV = { FELIS_POD_IP: '127.0.0.1', FELIS_SERVE_PORT: '0', FELIS_SERVE_TOKEN_SHA256: DIGEST };

/** `felis files --op write --receive ...` with `body` sent to it (or, `body` undefined, nothing). */
async function runWrite(root: string, args: string[], body: Buffer | undefined, env: Record<string, string> = ENV) {
  const x = io();
  let rcv: WriteReceiving | undefined;
  const exit = runCli(['files', '--op', 'write', '--receive', '--worlds-root', root, ...args], env, x.io, { onWriteReceiving: (r) => (rcv = r) });
  if (body !== undefined) {
    while (!rcv) await new Promise((w) => setTimeout(w, 5));
    const a = await put(rcv.address, body);
    assert.equal(a !== 'cut' && a.status, 200);
  }
  return { code: await exit, ...x.o };
}

test('felis files --op write --receive: the received content is written atomically and its Result printed', async () => {
  const w = makeWorld();
  const data = Buffer.from('motd=streamed\n');
  const r = await runWrite(w.root, ['--path', 'server2.properties', '--sha256', sha256(data)], data);
  assert.equal(r.code, 0, r.err);
  assert.equal(r.out, `${RESULT_PREFIX}{"sha256":"${sha256(data)}"}\n`);
  assert.deepEqual(fs.readFileSync(w.p('server2.properties')), data);
  assert.ok(!tree(w.root).some((p) => p.includes('.felis-edit-')));
});

test('a received body that does not hash to --sha256 is digest_mismatch, and nothing changes', async () => {
  const w = makeWorld();
  const before = snapshot(w.root);
  const r = await runWrite(w.root, ['--path', 'config/paper.yml', '--sha256', sha256('what was promised')], Buffer.from('something else'));
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /"code":"digest_mismatch"/);
  assert.deepEqual(snapshot(w.root), before);
});

test("the withheld-file rules are the write op's: a condition is refused, a plain overwrite lands", async () => {
  const w = makeWorld();
  const fresh = Buffer.from('proxies:\n  velocity:\n    secret: new\n');
  for (const cond of [['--expect-sha256', sha256(SECRET_TEXT)], ['--create-only']]) {
    const r = await runWrite(w.root, ['--path', 'config/paper-global.yml', '--sha256', sha256(fresh), ...cond], fresh);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /"code":"bad_path"/);
    assert.match(r.out, /proxy forwarding secret/);
    assert.equal(fs.readFileSync(w.p('config/paper-global.yml'), 'utf8'), SECRET_TEXT);
  }
  const stale = await runWrite(w.root, ['--path', 'config/paper.yml', '--sha256', sha256(fresh), '--expect-sha256', sha256('old')], fresh);
  assert.match(stale.out, /"code":"conflict"/);
  const over = await runWrite(w.root, ['--path', 'config/paper-global.yml', '--sha256', sha256(fresh)], fresh);
  // The old secret is kept in the undo trash (its record's id answered), where no route reads it.
  assert.match(over.out, new RegExp(`^${RESULT_PREFIX}\\{"sha256":"${sha256(fresh)}","trash_id":"[0-9a-f]{16}"\\}\n$`));
  assert.deepEqual(fs.readFileSync(w.p('config/paper-global.yml')), fresh);
});

test('no body within the idle period: exit 1, no result line, nothing written; a wrong env is exit 2', async () => {
  const w = makeWorld();
  const before = snapshot(w.root);
  const r = await runWrite(w.root, ['--path', 'late.txt', '--sha256', sha256('x')], undefined, { ...ENV, FELIS_SERVE_IDLE_SECONDS: '1' });
  assert.equal(r.code, 1);
  assert.equal(r.out, '');
  assert.match(r.err, /no content arrived \(idle\); nothing was written/);
  assert.deepEqual(snapshot(w.root), before);
  const noIp = await runWrite(w.root, ['--path', 'a', '--sha256', sha256('x')], undefined, { FELIS_SERVE_TOKEN_SHA256: DIGEST });
  assert.equal(noIp.code, 2);
  assert.match(noIp.err, /FELIS_POD_IP/);
  const noSum = await runWrite(w.root, ['--path', 'a'], undefined);
  assert.equal(noSum.code, 2);
  assert.match(noSum.err, /--sha256 is required/);
});
