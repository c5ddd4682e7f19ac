import assert from 'node:assert/strict';
import fs from 'node:fs';
import { request } from 'node:http';
import { test } from 'node:test';
import { jobToken, tokenDigest } from '../../lib/protocol/job-token.ts';
import { RESULT_PREFIX } from '../../lib/protocol/result.ts';
import { runCli } from '../cli.ts';
import { openContext } from '../op-kit/context.ts';
import { makeWorld, PROPS, sha256, snapshot, tree } from '../testing/world.ts';
import { landUpload } from '../upload/land.ts';
import { type Receiving, startReceiving } from './receive.ts';
import { runReceive } from './receive-run.ts';

const KEY = Buffer.alloc(32, 9);
const TOKEN = jobToken(KEY, 'files-survival-u0001');

interface Answer {
  status: number;
  body: string;
}

/** One call; `body` chunks are written with a pause between them, `cut` ends the socket early. */
function call(r: Receiving, path: string, o: { token?: string | null; method?: string; body?: Buffer[]; length?: number; cut?: boolean } = {}): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (o.token !== null) headers.authorization = `Bearer ${o.token ?? TOKEN}`;
  if (o.length !== undefined) headers['content-length'] = String(o.length);
  return new Promise((resolve, reject) => {
    const req = request({ host: r.address.address, port: r.address.port, path, method: o.method ?? 'PUT', headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    void (async () => {
      for (const c of o.body ?? []) {
        req.write(c);
        await new Promise((w) => setTimeout(w, 10));
      }
      if (o.cut) {
        await new Promise((w) => setTimeout(w, 50));
        req.destroy(new Error('cut'));
      } else req.end();
    })();
  });
}

async function receiver(root: string, extra: Partial<Parameters<typeof startReceiving>[0]> = {}): Promise<Receiving> {
  return startReceiving({
    host: '127.0.0.1',
    port: 0,
    tokenSha256: tokenDigest(TOKEN),
    idleMs: 60_000,
    lifetimeMs: 60_000,
    land: async (req, body) => {
      const ctx = openContext(root);
      try {
        return await landUpload(ctx, req, body);
      } finally {
        ctx.root.close();
      }
    },
    ...extra,
  });
}

const q = (path: string, b: Buffer, more = '') => `/upload?path=${encodeURIComponent(path)}&size=${b.length}&sha256=${sha256(b)}${more}`;

async function done(r: Receiving): Promise<void> {
  r.stop();
  await r.stopped;
}

test('an upload is placed in one piece, new files 0644, an overwrite keeps the mode, the game owns it', async () => {
  const w = makeWorld();
  const owned: string[] = [];
  const r = await startReceiving({
    host: '127.0.0.1',
    port: 0,
    tokenSha256: tokenDigest(TOKEN),
    idleMs: 60_000,
    lifetimeMs: 60_000,
    land: async (req, body) => {
      const ctx = openContext(w.root, { chown: (_p, uid, gid) => void owned.push(`${uid}:${gid}`) });
      try {
        return await landUpload(ctx, req, body);
      } finally {
        ctx.root.close();
      }
    },
  });
  try {
    const data = Buffer.alloc(3 << 20, 0x5a);
    data.write('start');
    const a = await call(r, q('plugins-new.jar', data), { body: [data.subarray(0, 1 << 20), data.subarray(1 << 20)], length: data.length });
    assert.equal(a.status, 200, a.body);
    assert.deepEqual(JSON.parse(a.body), { sha256: sha256(data) });
    assert.deepEqual(fs.readFileSync(w.p('plugins-new.jar')), data);
    assert.equal(fs.statSync(w.p('plugins-new.jar')).mode & 0o777, 0o644);
    assert.deepEqual(owned, ['1000:1000']);

    fs.chmodSync(w.p('server.properties'), 0o600);
    const props = Buffer.from('motd=new\n');
    const refused = await call(r, q('server.properties', props), { body: [props], length: props.length });
    assert.equal(JSON.parse(refused.body).code, 'exists');
    const b = await call(r, q('server.properties', props, '&overwrite=true'), { body: [props], length: props.length });
    assert.equal(b.status, 200, b.body);
    assert.equal(fs.readFileSync(w.p('server.properties'), 'utf8'), 'motd=new\n');
    assert.equal(fs.statSync(w.p('server.properties')).mode & 0o777, 0o600);
    assert.ok(!tree(w.root).some((p) => p.includes('.felis-edit-') && !p.startsWith('.felis-edit-undo')), 'no working file left');
    // The replaced file is kept in the undo trash (on by default), not lost.
    const kept = tree(w.root).filter((p) => p.startsWith('.felis-edit-undo/') && /\/0$/.test(p));
    assert.equal(kept.length, 1, String(kept));
    assert.equal(fs.readFileSync(w.p(kept[0]!), 'utf8'), PROPS);
  } finally {
    await done(r);
  }
});

test('bytes that lie (digest, short, long, broken off) change nothing and leave no working file', async () => {
  const w = makeWorld();
  const before = snapshot(w.root);
  const r = await receiver(w.root);
  try {
    const data = Buffer.from('the real bytes\n');
    const other = Buffer.from('other bytes!!!\n');
    const wrongDigest = await call(r, `/upload?path=new.txt&size=${other.length}&sha256=${sha256(data)}`, { body: [other], length: other.length });
    assert.equal(wrongDigest.status, 422);
    assert.equal(JSON.parse(wrongDigest.body).transfer, 'digest');
    // A body broken off before its length: the socket ends, the working file goes.
    await call(r, q('new.txt', data), { body: [data.subarray(0, 5)], length: data.length, cut: true }).catch(() => undefined);
    // Over the target too: an overwrite whose body lies leaves the old file. The receiver takes one
    // upload at a time and may not have seen the broken-off one end yet (409 busy meanwhile).
    let lie = await call(r, `/upload?path=server.properties&overwrite=true&size=${other.length}&sha256=${sha256(data)}`, { body: [other], length: other.length });
    for (let i = 0; lie.status === 409 && i < 50; i++) {
      await new Promise((w2) => setTimeout(w2, 100));
      lie = await call(r, `/upload?path=server.properties&overwrite=true&size=${other.length}&sha256=${sha256(data)}`, { body: [other], length: other.length });
    }
    assert.equal(lie.status, 422, lie.body);
    // Content-Length must be the promised size; none at all is 411.
    assert.equal((await call(r, q('new.txt', data), { body: [data, Buffer.from('x')], length: data.length + 1 })).status, 400);
    // Chunked (no Content-Length) is 411.
    assert.equal((await call(r, q('new.txt', data), { body: [data] })).status, 411);
    await new Promise((w2) => setTimeout(w2, 100));
    assert.deepEqual(snapshot(w.root), before);
  } finally {
    await done(r);
  }
});

test('a long body is refused before it lands: the landing reads at most size+1 bytes', async () => {
  const w = makeWorld();
  const ctx = openContext(w.root);
  try {
    const data = Buffer.from('abc');
    async function* longer() {
      yield Buffer.from('ab');
      yield Buffer.from('cd');
    }
    const l = await landUpload(ctx, { path: 'x.txt', size: 3, sha256: sha256(data), overwrite: false }, longer());
    assert.equal(l.kind, 'transfer');
    assert.equal(l.kind === 'transfer' && l.reason, 'long');
    async function* shorter() {
      yield Buffer.from('ab');
    }
    const s = await landUpload(ctx, { path: 'x.txt', size: 3, sha256: sha256(data), overwrite: false }, shorter());
    assert.equal(s.kind === 'transfer' && s.reason, 'short');
    assert.ok(!fs.existsSync(w.p('x.txt')));
    assert.ok(!tree(w.root).some((p) => p.includes('.felis-edit-')));
  } finally {
    ctx.root.close();
  }
});

test('targets refused before a byte is read: folder, escape, link out, working name, no room', async () => {
  const w = makeWorld();
  fs.symlinkSync('../outside/secret.txt', w.p('out-link'));
  const data = Buffer.from('x');
  let pulled = 0;
  async function* body() {
    pulled++;
    yield data;
  }
  const ctx = openContext(w.root, { statfs: () => ({ bavail: 10n, bsize: 1n }) });
  try {
    const cases: [string, boolean, string][] = [
      ['config', true, 'bad_path'],
      ['config', false, 'bad_path'],
      ['../outside/new.txt', true, 'bad_path'],
      ['out-link', true, 'bad_path'],
      ['out-link', false, 'exists'],
      ['.felis-edit-0123456789ab', true, 'bad_path'],
      ['missing/dir/x.txt', true, 'not_found'],
    ];
    for (const [path, overwrite, code] of cases) {
      const l = await landUpload(ctx, { path, size: 1, sha256: sha256(data), overwrite }, body());
      assert.equal(l.kind === 'result' && l.result.code, code, `${path} overwrite=${overwrite}`);
    }
    const big = await landUpload(ctx, { path: 'big.bin', size: 11, sha256: sha256(data), overwrite: false }, body());
    assert.ok(big.kind === 'result');
    assert.equal(big.result.code, 'no_space');
    assert.equal(big.result.need, 11);
    assert.equal(big.result.avail, 10);
    assert.equal(pulled, 0, 'the body was never read');
    assert.equal(fs.readFileSync(`${w.outside}/secret.txt`, 'utf8'), 'outside-secret\n');
  } finally {
    ctx.root.close();
  }
});

test("the token comes first: none, a wrong one, another Job's are refused and nothing lands", async () => {
  const w = makeWorld();
  let landed = 0;
  const r = await receiver(w.root, {
    land: async () => {
      landed++;
      return { kind: 'result', result: {} };
    },
  });
  try {
    const data = Buffer.from('x');
    for (const token of [null, 'f'.repeat(64), jobToken(KEY, 'files-survival-u0002'), tokenDigest(TOKEN)]) {
      const a = await call(r, q('a.txt', data), { token, body: [data], length: 1 });
      assert.equal(a.status, 401);
      assert.equal((await call(r, '/ready', { token, method: 'GET' })).status, 401);
    }
    assert.equal(landed, 0);
    assert.equal((await call(r, '/ready', { method: 'GET' })).status, 200);
    assert.equal((await call(r, '/nope', { method: 'GET' })).status, 404);
    assert.equal((await call(r, q('a.txt', data), { method: 'POST', body: [data], length: 1 })).status, 405);
  } finally {
    await done(r);
  }
});

test('once mode stops after the first upload; idle mode stops by itself', async () => {
  const w = makeWorld();
  const once = await receiver(w.root, { once: true });
  const data = Buffer.from('hello');
  assert.equal((await call(once, q('a.txt', data), { body: [data], length: data.length })).status, 200);
  const s = await once.stopped;
  assert.equal(s.reason, 'done');
  assert.equal(s.landings, 1);
  const idle = await receiver(w.root, { idleMs: 200 });
  assert.equal((await idle.stopped).reason, 'idle');
  assert.equal(tree(w.root).filter((p) => p.includes('.felis-edit-')).length, 0);
});

test('felis files --receive: env checked, one upload, its Result as the result line; a lie is exit 1', async () => {
  const w = makeWorld();
  const digest = tokenDigest(TOKEN);
  const io = () => {
    const o = { out: '', err: '' };
    return { o, io: { stdout: (t: string) => void (o.out += t), stderr: (t: string) => void (o.err += t) } };
  };
  const bad = io();
  assert.equal(await runCli(['files', '--receive', '--worlds-root', w.root], { FELIS_SERVE_TOKEN_SHA256: digest }, bad.io), 2);
  assert.match(bad.o.err, /FELIS_POD_IP/);
  const both = io();
  assert.equal(await runCli(['files', '--receive', '--op', 'read', '--worlds-root', w.root], { FELIS_POD_IP: '127.0.0.1', FELIS_SERVE_TOKEN_SHA256: digest }, both.io), 2);

  const env = { FELIS_POD_IP: '127.8.7.6', FELIS_SERVE_PORT: '0', FELIS_SERVE_TOKEN_SHA256: digest, FELIS_RECEIVE_ONCE: 'true' };
  for (const lie of [false, true]) {
    const x = io();
    let rcv!: Receiving;
    const exit = runReceive(w.root, env, x.io, { onReceiving: (r) => (rcv = r) });
    while (!rcv) await new Promise((r) => setTimeout(r, 5));
    const data = Buffer.from(lie ? 'lie' : 'truth');
    const path = lie ? `/upload?path=lie.txt&size=3&sha256=${sha256('else')}` : q('truth.txt', data);
    await call(rcv, path, { body: [data], length: data.length });
    if (lie) {
      assert.equal(await exit, 1);
      assert.equal(x.o.out, '');
      assert.match(x.o.err, /hash to/);
      assert.ok(!fs.existsSync(w.p('lie.txt')));
    } else {
      assert.equal(await exit, 0);
      assert.equal(x.o.out, `${RESULT_PREFIX}{"sha256":"${sha256(data)}"}\n`);
      assert.equal(fs.readFileSync(w.p('truth.txt'), 'utf8'), 'truth');
    }
  }
});

test('the wire carries parents=true: a missing folder is made only when it says so, and exactly "true" counts', async () => {
  const w = makeWorld();
  const r = await receiver(w.root);
  try {
    const data = Buffer.from('a: 1\n');
    const plain = await call(r, q('plugins/New/config.yml', data), { body: [data], length: data.length });
    assert.equal(JSON.parse(plain.body).code, 'not_found');
    const yes = await call(r, q('plugins/New/config.yml', data, '&parents=1'), { body: [data], length: data.length });
    assert.equal(JSON.parse(yes.body).code, 'not_found', 'only parents=true makes folders');
    assert.equal(fs.existsSync(w.p('plugins')), false);
    const made = await call(r, q('plugins/New/config.yml', data, '&parents=true'), { body: [data], length: data.length });
    assert.equal(made.status, 200, made.body);
    assert.deepEqual(fs.readFileSync(w.p('plugins/New/config.yml')), data);
  } finally {
    await done(r);
  }
});
