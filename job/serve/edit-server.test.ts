import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { request } from 'node:http';
import { test } from 'node:test';
import { encodeContentEnv } from '../../lib/protocol/content-env.ts';
import { encodeEditCall, LEASE_MARGIN_MS } from '../../lib/protocol/edit-call.ts';
import { jobToken, tokenDigest } from '../../lib/protocol/job-token.ts';
import { GRACE_MS, lockValue } from '../../lib/protocol/lock-value.ts';
import { RESULT_PREFIX } from '../../lib/protocol/result.ts';
import { runCli } from '../cli.ts';
import { makeWorld, snapshot } from '../testing/world.ts';
import { type EditServeOptions, type RunProgram, startEditServing } from './edit-server.ts';
import type { Serving } from './server.ts';

const KEY = Buffer.alloc(32, 9);
const TOKEN = jobToken(KEY, 'files-survival-e0001');
const sha = (b: string | Buffer) => createHash('sha256').update(b).digest('hex');
const TRASH_OFF_ENV = { FELIS_TRASH: 'off' };

function post(s: Serving, body: string, opts: { token?: string; path?: string; method?: string } = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: s.address.address,
        port: s.address.port,
        path: opts.path ?? '/op',
        method: opts.method ?? 'POST',
        headers: { authorization: `Bearer ${opts.token ?? TOKEN}`, 'content-length': String(Buffer.byteLength(body)) },
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, body: Buffer.concat(chunks).toString() }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const program: RunProgram = (argv, env, io) => runCli(argv, env, io);

async function serve(root: string, extra: Partial<EditServeOptions> = {}): Promise<Serving> {
  const s = await startEditServing({ host: '127.0.0.1', port: 0, tokenSha256: tokenDigest(TOKEN), worldsRoot: root, run: program, idleMs: 60_000, lifetimeMs: 60_000, ...extra });
  return s;
}

const held = (at = new Date()) => lockValue('file-write', at);

function writeCall(root: string, rel: string, text: string, lock = held()) {
  const env = Object.fromEntries(encodeContentEnv(Buffer.from(text)).map((e) => [e.name, e.value]));
  return encodeEditCall({ argv: ['files', '--op', 'write', '--path', rel, '--sha256', sha(text), '--worlds-root', root], env: { ...env, ...TRASH_OFF_ENV }, lock });
}

/** What a one-shot Job prints for the same arguments, without the prefix and newline. */
async function oneShot(argv: string[], env: Record<string, string>): Promise<string> {
  let out = '';
  const code = await runCli(argv, env, { stdout: (t) => void (out += t), stderr: () => {} });
  assert.equal(code, 0);
  return out.slice(out.indexOf(RESULT_PREFIX) + RESULT_PREFIX.length).trimEnd();
}

test("a call holding the lock writes the file and answers the one-shot Job's result line", async () => {
  const w = makeWorld();
  const s = await serve(w.root);
  try {
    const r = await post(s, writeCall(w.root, 'motd.txt', 'hello\n'));
    assert.equal(r.status, 200, r.body);
    assert.equal(fs.readFileSync(w.p('motd.txt'), 'utf8'), 'hello\n');
    assert.deepEqual(JSON.parse(r.body), { sha256: sha('hello\n') });
    // The same refusal as a one-shot Job, code and message: a path out of the world.
    const argv = ['files', '--op', 'rename', '--path', 'server.properties', '--to', '../outside/x', '--worlds-root', w.root];
    const refused = await post(s, encodeEditCall({ argv, env: TRASH_OFF_ENV, lock: held() }));
    assert.equal(refused.status, 200);
    assert.equal(refused.body, await oneShot(argv, TRASH_OFF_ENV));
    assert.equal(JSON.parse(refused.body).code, 'bad_path');
  } finally {
    s.stop();
    await s.stopped;
  }
});

test('a lock that no longer holds (or is not a file-write lock) changes nothing: 409', async () => {
  const w = makeWorld();
  const s = await serve(w.root);
  const before = snapshot(w.root);
  try {
    const old = new Date(Date.now() - (GRACE_MS - LEASE_MARGIN_MS) - 1000);
    const ahead = new Date(Date.now() + (GRACE_MS - LEASE_MARGIN_MS) + 1000);
    for (const lock of [held(old), held(ahead), lockValue('config-write', new Date()), 'file-write@never', '']) {
      const r = await post(s, writeCall(w.root, 'motd.txt', 'late\n', lock));
      assert.equal(r.status, 409, `${lock}: ${r.body}`);
    }
    assert.deepEqual(snapshot(w.root), before);
  } finally {
    s.stop();
    await s.stopped;
  }
});

test('only a session op on this world, with a carried env of its own kind: anything else is 400 and runs nothing', async () => {
  const w = makeWorld();
  const s = await serve(w.root);
  const before = snapshot(w.root);
  try {
    const bad: [string[], Record<string, string>][] = [
      [['files', '--op', 'list', '--path', '', '--worlds-root', w.root], {}],
      [['files', '--op', 'unzip', '--path', 'a.zip', '--worlds-root', w.root], {}],
      [['files', '--op', 'delete', '--path', 'server.properties', '--', '--worlds-root', w.outside], {}],
      [['files', '--op', 'delete', '--path', 'server.properties', 'extra'], {}],
      [['files', '--serve', '--edit', '--worlds-root', w.root], {}],
      [['export', '--mode', 'files'], {}],
      [['files', '--op', 'delete', '--path', 'server.properties', '--worlds-root', w.root], { NODE_OPTIONS: '--require=/tmp/x.js' }],
      [['files', '--op', 'delete', '--path', 'server.properties', '--worlds-root', w.root], { FELIS_PULL_ALLOW: '0.0.0.0/0' }],
    ];
    for (const [argv, env] of bad) {
      const r = await post(s, encodeEditCall({ argv, env, lock: held() }));
      assert.equal(r.status, 400, `${argv.join(' ')} ${JSON.stringify(env)}: ${r.body}`);
    }
    for (const body of ['', 'nope', '[]', '{"argv":"files","env":{},"lock":""}']) assert.equal((await post(s, body)).status, 400, body);
    assert.equal((await post(s, writeCall(w.root, 'motd.txt', 'x'), { token: 'wrong' })).status, 401);
    assert.equal((await post(s, writeCall(w.root, 'motd.txt', 'x'), { path: '/list' })).status, 404);
    assert.equal((await post(s, '', { method: 'PUT' })).status, 405);
    assert.equal((await post(s, 'x'.repeat((3 << 20) + 1))).status, 413);
    assert.deepEqual(snapshot(w.root), before);
  } finally {
    s.stop();
    await s.stopped;
  }
});

test("a call runs on the Pod's own world root, whatever root it names", async () => {
  const w = makeWorld();
  const s = await serve(w.root);
  try {
    const argv = ['files', '--op', 'mkdir', '--path', 'made', '--worlds-root', w.outside];
    const r = await post(s, encodeEditCall({ argv, env: TRASH_OFF_ENV, lock: held() }));
    assert.equal(r.status, 200, r.body);
    assert.ok(fs.statSync(w.p('made')).isDirectory());
    assert.equal(fs.existsSync(`${w.outside}/made`), false);
  } finally {
    s.stop();
    await s.stopped;
  }
});

test('calls run one at a time, in arrival order', async () => {
  const w = makeWorld();
  let running = 0;
  let most = 0;
  const order: string[] = [];
  const slow: RunProgram = async (argv, env, io) => {
    running++;
    most = Math.max(most, running);
    await new Promise((r) => setTimeout(r, 20));
    order.push(argv[argv.indexOf('--path') + 1]!);
    running--;
    return runCli(argv, env, io);
  };
  const s = await serve(w.root, { run: slow });
  try {
    const names = ['a.txt', 'b.txt', 'c.txt', 'd.txt'];
    const answers = await Promise.all(names.map((n) => post(s, writeCall(w.root, n, n))));
    assert.deepEqual(
      answers.map((a) => a.status),
      [200, 200, 200, 200],
    );
    assert.equal(most, 1);
    assert.deepEqual(order, names);
    for (const n of names) assert.equal(fs.readFileSync(w.p(n), 'utf8'), n);
  } finally {
    s.stop();
    await s.stopped;
  }
});

test('POST /end with the token stops the session; without it, nothing', async () => {
  const w = makeWorld();
  const s = await serve(w.root);
  assert.equal((await post(s, '', { path: '/end', token: 'wrong' })).status, 401);
  const r = await post(s, '', { path: '/end' });
  assert.equal(r.status, 202);
  assert.equal((await s.stopped).reason, 'signal');
});

test('a program that prints no result answers 500 with what it said, not a result', async () => {
  const w = makeWorld();
  const s = await serve(w.root, { run: async (_a, _e, io) => (io.stderr('felis files: open world root: EIO\n'), 1) });
  try {
    const r = await post(s, writeCall(w.root, 'motd.txt', 'x'));
    assert.equal(r.status, 500);
    assert.match(JSON.parse(r.body).error, /exit 1: felis files: open world root: EIO/);
  } finally {
    s.stop();
    await s.stopped;
  }
});

test('the CLI runs the edit session from its env and stops with the usual result line', async () => {
  const w = makeWorld();
  let out = '';
  let serving: Serving | undefined;
  const done = runCli(
    ['files', '--serve', '--edit', '--worlds-root', w.root],
    { FELIS_POD_IP: '127.0.0.1', FELIS_SERVE_PORT: '0', FELIS_SERVE_TOKEN_SHA256: tokenDigest(TOKEN) },
    { stdout: (t) => void (out += t), stderr: () => {} },
    { onListening: (s) => (serving = s) },
  );
  while (!serving) await new Promise((r) => setTimeout(r, 5));
  const r = await post(serving, writeCall(w.root, 'motd.txt', 'via cli\n'));
  assert.equal(r.status, 200, r.body);
  assert.equal(fs.readFileSync(w.p('motd.txt'), 'utf8'), 'via cli\n');
  serving.stop('signal');
  assert.equal(await done, 0);
  // One result line in the Pod's log, its own: the call's went back to the caller.
  assert.equal(out.split(RESULT_PREFIX).length - 1, 1, out);
  assert.ok(out.endsWith(`${RESULT_PREFIX}{}\n`), out);
  assert.equal(await runCli(['files', '--edit', '--worlds-root', w.root], {}, { stdout: () => {}, stderr: () => {} }), 2);
});
