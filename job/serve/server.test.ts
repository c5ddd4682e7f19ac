import assert from 'node:assert/strict';
import fs from 'node:fs';
import { request } from 'node:http';
import { test } from 'node:test';
import { jobToken, tokenDigest } from '../../lib/protocol/job-token.ts';
import type { ServeOp } from '../../lib/protocol/ops.ts';
import { RESULT_PREFIX, type Result } from '../../lib/protocol/result.ts';
import { runCli } from '../cli.ts';
import { execute } from '../dispatch/execute.ts';
import { makeWorld, snapshot } from '../testing/world.ts';
import { runServe } from './run.ts';
import { type Serving, startServing } from './server.ts';

const KEY = Buffer.alloc(32, 7);
const TOKEN = jobToken(KEY, 'files-survival-b0001');

interface Answer {
  status: number;
  body: string;
  headers: Record<string, string | string[] | undefined>;
}

function call(s: Serving, path: string, opts: { token?: string | null; method?: string; body?: string; auth?: string } = {}): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (opts.auth !== undefined) headers.authorization = opts.auth;
  else if (opts.token !== null) headers.authorization = `Bearer ${opts.token ?? TOKEN}`;
  if (opts.body !== undefined) headers['content-length'] = String(Buffer.byteLength(opts.body));
  return new Promise((resolve, reject) => {
    const req = request({ host: s.address.address, port: s.address.port, path, method: opts.method ?? 'GET', headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, body: Buffer.concat(chunks).toString(), headers: res.headers }));
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

async function serve(root: string, extra: Partial<Parameters<typeof startServing>[0]> = {}): Promise<Serving> {
  const s = await startServing({
    host: '127.0.0.1',
    port: 0,
    tokenSha256: tokenDigest(TOKEN),
    idleMs: 60_000,
    lifetimeMs: 60_000,
    run: (op: ServeOp, query) => execute({ op, worldsRoot: root, ...query }),
    ...extra,
  });
  return s;
}

/** What the one-shot Job prints for the same op, without the prefix and newline. */
async function oneShot(root: string, op: string, path: string): Promise<string> {
  let out = '';
  const code = await runCli(['files', '--op', op, '--path', path, '--worlds-root', root], {}, { stdout: (t) => void (out += t), stderr: () => {} });
  assert.equal(code, 0);
  assert.ok(out.startsWith(RESULT_PREFIX) && out.endsWith('\n'));
  return out.slice(RESULT_PREFIX.length, -1);
}

test("a request without the token, with a wrong one, or with another Job's token is refused before anything runs", async () => {
  const w = makeWorld();
  let ran = 0;
  const s = await serve(w.root, {
    run: async () => {
      ran++;
      return {};
    },
  });
  try {
    const refusals = [
      await call(s, '/read?path=server.properties', { token: null }),
      await call(s, '/read?path=server.properties', { token: 'f'.repeat(64) }),
      await call(s, '/read?path=server.properties', { token: jobToken(KEY, 'files-survival-b0002') }),
      await call(s, '/read?path=server.properties', { auth: TOKEN }),
      await call(s, '/read?path=server.properties', { auth: `bearer ${TOKEN}` }),
      await call(s, '/read?path=server.properties', { auth: `Bearer ${tokenDigest(TOKEN)}` }),
      // Unknown paths and methods learn nothing without the token either.
      await call(s, '/nope', { token: null }),
      await call(s, '/read', { token: null, method: 'POST', body: 'x' }),
    ];
    for (const r of refusals) {
      assert.equal(r.status, 401);
      assert.equal(r.body, '{"error":"unauthorized"}');
    }
    assert.equal(ran, 0);
    assert.equal((await call(s, '/read?path=server.properties')).status, 200);
    assert.equal(ran, 1);
  } finally {
    s.stop();
    await s.stopped;
  }
});

test("a read or list through serving equals the one-shot Job's result byte for byte, redaction and guarded files included", async () => {
  const w = makeWorld();
  fs.writeFileSync(w.p('bin.dat'), Buffer.from([0, 0xff, 0x80, 0x0a, 0x22]));
  fs.writeFileSync(w.p('a b+c%20ü&x=1.txt'), 'odd name\n');
  fs.symlinkSync('server.properties', w.p('props-link'));
  fs.linkSync(w.p('config/paper-global.yml'), w.p('hard-secret'));
  const s = await serve(w.root);
  try {
    const cases: [string, string][] = [
      ['read', 'server.properties'],
      ['read', 'props-link'],
      ['read', 'config/paper-global.yml'],
      ['read', 'hard-secret'],
      ['read', 'bin.dat'],
      ['read', 'a b+c%20ü&x=1.txt'],
      ['read', 'missing.txt'],
      ['read', '../outside/secret.txt'],
      ['read', 'config'],
      ['list', ''],
      ['list', 'config'],
      ['list', 'nope'],
    ];
    for (const [op, path] of cases) {
      const r = await call(s, `/${op}?path=${encodeURIComponent(path)}`);
      assert.equal(r.status, 200, `${op} ${path}: ${r.body}`);
      assert.equal(r.headers['content-type'], 'application/json');
      const expected = await oneShot(w.root, op, path);
      // Free space is read at each call, and the disk is shared: only it may differ between the two.
      const noAvail = (t: string) => t.replace(/,"avail":\d+/, ',"avail":N');
      assert.equal(noAvail(r.body), noAvail(expected), `${op} ${path}`);
      assert.equal(r.body.includes('"avail":'), expected.includes('"avail":'), `${op} ${path}`);
    }
    const props = JSON.parse((await call(s, '/read?path=server.properties')).body) as Result;
    assert.ok(!Buffer.from(props.content!, 'base64').toString().includes('hunter2'), 'the rcon password is redacted');
    assert.equal(JSON.parse((await call(s, '/read?path=config/paper-global.yml')).body).code, 'bad_path');
  } finally {
    s.stop();
    await s.stopped;
  }
});

test('serving is read-only: other ops, methods, bodies are refused and the world is unchanged', async () => {
  const w = makeWorld();
  const before = snapshot(w.root);
  const s = await serve(w.root);
  try {
    assert.equal((await call(s, '/write?path=x')).status, 404);
    assert.equal((await call(s, '/delete?path=server.properties')).status, 404);
    const post = await call(s, '/read?path=server.properties', { method: 'POST' });
    assert.equal(post.status, 405);
    assert.equal(post.headers.allow, 'GET');
    assert.equal((await call(s, '/read?path=server.properties', { method: 'GET', body: 'abc' })).status, 413);
    assert.deepEqual(snapshot(w.root), before);
  } finally {
    s.stop();
    await s.stopped;
  }
});

test('past the concurrency bound a request gets 503 busy, and the others still answer', async () => {
  const w = makeWorld();
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const s = await serve(w.root, {
    maxConcurrent: 1,
    run: async () => {
      await gate;
      return { sha256: 'a'.repeat(64) };
    },
  });
  try {
    const first = call(s, '/read?path=a');
    await new Promise((r) => setTimeout(r, 50));
    const second = await call(s, '/read?path=b');
    assert.equal(second.status, 503);
    assert.equal(second.headers['retry-after'], '1');
    release();
    assert.equal((await first).status, 200);
  } finally {
    s.stop();
    await s.stopped;
  }
});

test('an infrastructure failure is a 500 with the error, not a result', async () => {
  const s = await serve('/nonexistent-world-root');
  try {
    const r = await call(s, '/read?path=a');
    assert.equal(r.status, 500);
    assert.match(JSON.parse(r.body).error, /open world root/);
  } finally {
    s.stop();
    await s.stopped;
  }
});

test('serving stops by itself after the idle period, and requests keep it alive until then', async () => {
  const w = makeWorld();
  const started = performance.now();
  const s = await serve(w.root, { idleMs: 300 });
  for (let i = 0; i < 4; i++) {
    await new Promise((r) => setTimeout(r, 150));
    assert.equal((await call(s, '/list?path=')).status, 200);
  }
  const { reason, served } = await s.stopped;
  assert.equal(reason, 'idle');
  assert.equal(served, 4);
  assert.ok(performance.now() - started >= 600 + 300 - 20, 'each request restarted the idle clock');
  await assert.rejects(call(s, '/list?path='), /ECONNREFUSED/);
});

test('serving stops at its lifetime even while busy', async () => {
  const w = makeWorld();
  const s = await serve(w.root, { idleMs: 10_000, lifetimeMs: 250 });
  const busy = setInterval(() => void call(s, '/list?path=').catch(() => {}), 40);
  try {
    assert.equal((await s.stopped).reason, 'lifetime');
  } finally {
    clearInterval(busy);
  }
});

test('felis files --serve: wrong environment is exit 2; a signal stops it with one result line and exit 0', async () => {
  const w = makeWorld();
  const io = () => {
    const o = { out: '', err: '' };
    return { o, io: { stdout: (t: string) => void (o.out += t), stderr: (t: string) => void (o.err += t) } };
  };
  const digest = tokenDigest(TOKEN);
  for (const [env, msg] of [
    [{ FELIS_SERVE_TOKEN_SHA256: digest }, /FELIS_POD_IP/],
    [{ FELIS_POD_IP: '127.0.0.1' }, /FELIS_SERVE_TOKEN_SHA256/],
    [{ FELIS_POD_IP: '127.0.0.1', FELIS_SERVE_TOKEN_SHA256: digest.toUpperCase() }, /FELIS_SERVE_TOKEN_SHA256/],
    [{ FELIS_POD_IP: '127.0.0.1', FELIS_SERVE_TOKEN_SHA256: digest, FELIS_SERVE_IDLE_SECONDS: '0' }, /IDLE/],
  ] as const) {
    const x = io();
    assert.equal(await runCli(['files', '--serve', '--worlds-root', w.root], env, x.io), 2);
    assert.match(x.o.err, msg);
    assert.equal(x.o.out, '');
  }
  const both = io();
  assert.equal(await runCli(['files', '--serve', '--op', 'read', '--worlds-root', w.root], { FELIS_POD_IP: '127.0.0.1', FELIS_SERVE_TOKEN_SHA256: digest }, both.io), 2);
  const noRoot = io();
  assert.equal(await runCli(['files', '--serve', '--worlds-root', '/nonexistent-root'], { FELIS_POD_IP: '127.0.0.1', FELIS_SERVE_TOKEN_SHA256: digest }, noRoot.io), 1);

  // A Pod's own loopback address, as the embedded kubelet gives it.
  const x = io();
  let stop!: () => void;
  let serving!: Serving;
  const done = runServe(w.root, { FELIS_POD_IP: '127.9.8.7', FELIS_SERVE_PORT: '0', FELIS_SERVE_TOKEN_SHA256: digest }, x.io, {
    onSignal: (s) => (stop = s),
    onListening: (s) => (serving = s),
  });
  while (!serving) await new Promise((r) => setTimeout(r, 5));
  assert.equal(serving.address.address, '127.9.8.7');
  const r = await call(serving, '/read?path=server.properties');
  assert.equal(r.body, await oneShot(w.root, 'read', 'server.properties'));
  stop();
  assert.equal(await done, 0);
  assert.equal(x.o.out, `${RESULT_PREFIX}{}\n`);
  assert.match(x.o.err, /stopped \(signal\) after 1 requests/);
});

test('a browse read of a hard link left holding the secret after the game replaced it (temp + rename) is bad_path; its listing size is 0', async () => {
  const w = makeWorld();
  const secret = fs.readFileSync(w.p('config/paper-global.yml'));
  assert.equal((await execute({ op: 'mkdir', path: 'plugins', worldsRoot: w.root })).code, undefined); // a read-write Job saw it
  fs.linkSync(w.p('config/paper-global.yml'), w.p('plugins/old.yml'));
  fs.writeFileSync(w.p('config/.tmp'), 'rotated by the game\n');
  fs.renameSync(w.p('config/.tmp'), w.p('config/paper-global.yml'));
  const s = await serve(w.root);
  try {
    const r = await call(s, '/read?path=plugins/old.yml');
    assert.equal(r.status, 200, r.body);
    assert.equal(JSON.parse(r.body).code, 'bad_path', r.body);
    assert.ok(!r.body.includes(secret.toString('base64')));
    const l = JSON.parse((await call(s, '/list?path=plugins')).body) as Result;
    assert.equal(l.entries!.find((e) => e.name === 'old.yml')!.size, 0);
  } finally {
    s.stop();
    await s.stopped;
  }
});

test("an op's query rides beside the path: limit, after and q reach the op as given; a limit that is not a whole number of at least 1 is a 400", async () => {
  const w = makeWorld();
  const seen: unknown[] = [];
  const s = await serve(w.root, {
    run: async (_op, query) => {
      seen.push(query);
      return {};
    },
  });
  try {
    assert.equal((await call(s, '/list?path=world&limit=500&after=a%2Fb&q=%C3%84')).status, 200);
    assert.equal((await call(s, '/list?path=world')).status, 200);
    assert.equal((await call(s, '/list?path=&q=')).status, 200);
    assert.deepEqual(seen, [{ path: 'world', limit: 500, after: 'a/b', q: 'Ä' }, { path: 'world' }, { path: '', q: '' }]);
    for (const bad of ['0', '-1', 'x', '1.5', '', '9999999999']) {
      const r = await call(s, `/list?path=world&limit=${bad}`);
      assert.equal(r.status, 400, bad);
      assert.match(r.body, /limit must be a whole number/);
    }
    assert.equal(seen.length, 3, 'a refused query runs nothing');
    // A usage answer's shape rides the same way, with the same check.
    assert.equal((await call(s, '/usage?path=world&depth=2&top=100')).status, 200);
    assert.deepEqual(seen[3], { path: 'world', depth: 2, top: 100 });
    for (const bad of ['depth=0', 'top=x', 'depth=1.5']) {
      const r = await call(s, `/usage?path=world&${bad}`);
      assert.equal(r.status, 400, bad);
      assert.match(r.body, /(depth|top) must be a whole number/);
    }
    assert.equal(seen.length, 4);
  } finally {
    s.stop();
    await s.stopped;
  }
});

test("a search through serving equals the one-shot Job's result byte for byte, query and all", async () => {
  const w = makeWorld();
  fs.mkdirSync(w.p('world/region'), { recursive: true });
  fs.writeFileSync(w.p('world/level.dat'), 'L');
  fs.writeFileSync(w.p('world/region/r.0.0.mca'), 'R');
  fs.symlinkSync(w.outside, w.p('out'));
  const s = await serve(w.root);
  try {
    const cases: [string, string, string | undefined][] = [
      ['', 'level', undefined],
      ['', '*.yml', '1'],
      ['world', 'r.?.?.mca', undefined],
      ['', 'secret', undefined],
      ['nope', 'level', undefined],
      ['', 'l', undefined],
    ];
    for (const [path, q, limit] of cases) {
      const r = await call(s, `/search?path=${encodeURIComponent(path)}&q=${encodeURIComponent(q)}${limit ? `&limit=${limit}` : ''}`);
      assert.equal(r.status, 200, `${path} ${q}: ${r.body}`);
      let out = '';
      const code = await runCli(
        ['files', '--op', 'search', '--path', path, '--worlds-root', w.root, '--q', q, ...(limit ? ['--limit', limit] : [])],
        {},
        { stdout: (t) => void (out += t), stderr: () => {} },
      );
      assert.equal(code, 0);
      assert.equal(r.body, out.slice(RESULT_PREFIX.length, -1), `${path} ${q}`);
    }
    const level = JSON.parse((await call(s, '/search?path=&q=level')).body) as Result;
    assert.deepEqual(
      level.matches!.map((m) => m.path),
      ['world/level.dat'],
    );
    assert.deepEqual(JSON.parse((await call(s, '/search?path=&q=secret')).body), { scanned: 9 }, 'nothing through the link out: 9 entries, the link one of them');
  } finally {
    s.stop();
    await s.stopped;
  }
});
