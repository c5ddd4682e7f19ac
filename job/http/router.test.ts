import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { Agent, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { send } from './answer.ts';
import { PodServer } from './listen.ts';
import type { RouterOptions } from './router.ts';

const TOKEN = 'the-job-token';
const DIGEST = createHash('sha256').update(TOKEN).digest('hex');

interface Answer {
  status: number;
  body: string;
  headers: Record<string, string | string[] | undefined>;
}

function call(a: AddressInfo, method: string, path: string, o: { auth?: string | null; body?: string; agent?: Agent } = {}): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (o.auth !== null) headers.authorization = o.auth ?? `Bearer ${TOKEN}`;
  if (o.body !== undefined) headers['content-length'] = String(Buffer.byteLength(o.body));
  return new Promise((resolve, reject) => {
    const req = request({ host: a.address, port: a.port, method, path, headers, agent: o.agent ?? false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, body: Buffer.concat(chunks).toString(), headers: res.headers }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(o.body);
  });
}

/** A server with two routes on one path and one on another; `hits` counts the handlers that ran. */
async function serve(extra: Partial<RouterOptions> = {}) {
  const hits: string[] = [];
  const pod = new PodServer({ tokenSha256: DIGEST, requestTimeoutMs: 5_000, life: { idleMs: 60_000, graceMs: 100 }, ...extra });
  pod.route('GET', '/thing', (_req, res, url) => {
    hits.push(`GET /thing ${url.searchParams.get('q')}`);
    send(res, 200, '{"got":true}');
  });
  pod.route('PUT', '/thing', (req, res) => {
    hits.push('PUT /thing');
    req.resume();
    send(res, 201, '{}');
  });
  pod.route('POST', '/boom', async () => {
    hits.push('POST /boom');
    await new Promise((r) => setImmediate(r));
    throw new Error('the disk is gone');
  });
  pod.route('GET', '/half', (_req, res) => {
    hits.push('GET /half');
    res.writeHead(200, { 'content-length': '100' });
    res.write('x'.repeat(10));
    throw new Error('cut off');
  });
  const address = await pod.listen(0, '127.0.0.1');
  return { pod, address, hits };
}

test('a route answers for its method and exact path, with the parsed query', async () => {
  const s = await serve();
  try {
    assert.deepEqual(await call(s.address, 'GET', '/thing?q=a%20b').then((a) => [a.status, a.body]), [200, '{"got":true}']);
    assert.equal((await call(s.address, 'PUT', '/thing', { body: 'x' })).status, 201);
    assert.deepEqual(s.hits, ['GET /thing a b', 'PUT /thing']);
  } finally {
    s.pod.life.stop();
    await s.pod.stopped;
  }
});

test('another path is 404, another method on a known path 405 with Allow, and no handler runs', async () => {
  const s = await serve();
  try {
    for (const path of ['/', '/thing/', '/things', '/THING', '/thing/more']) {
      const a = await call(s.address, 'GET', path);
      assert.deepEqual([a.status, a.body, a.headers['cache-control']], [404, '{"error":"not found"}', 'no-store'], path);
    }
    const a = await call(s.address, 'DELETE', '/thing', { body: 'ignored' });
    assert.deepEqual([a.status, a.body, a.headers.allow], [405, '{"error":"method not allowed"}', 'GET, PUT']);
    assert.deepEqual(s.hits, []);
  } finally {
    s.pod.life.stop();
    await s.pod.stopped;
  }
});

test('the guard comes first: without the right token every request is 401 and learns nothing', async () => {
  const s = await serve();
  try {
    const wrong = [null, 'Bearer nope', TOKEN, `bearer ${TOKEN}`, `Bearer ${DIGEST}`];
    for (const auth of wrong) {
      for (const [method, path] of [
        ['GET', '/thing'],
        ['GET', '/nowhere'],
        ['DELETE', '/thing'],
        ['POST', '/boom'],
      ] as const) {
        const a = await call(s.address, method, path, { auth });
        assert.deepEqual([a.status, a.body], [401, '{"error":"unauthorized"}'], `${auth} ${method} ${path}`);
      }
    }
    assert.deepEqual(s.hits, []);
  } finally {
    s.pod.life.stop();
    await s.pod.stopped;
  }
});

test('a handler that throws is a 500 with its message; one that had begun its answer is cut off', async () => {
  const s = await serve();
  try {
    const a = await call(s.address, 'POST', '/boom');
    assert.deepEqual([a.status, a.body], [500, '{"error":"the disk is gone"}']);
    await assert.rejects(call(s.address, 'GET', '/half'), 'a body cut short is never a whole one');
    // The server still answers.
    assert.equal((await call(s.address, 'GET', '/thing')).status, 200);
  } finally {
    s.pod.life.stop();
    await s.pod.stopped;
  }
});

test('a fallback answers what no route takes, instead of 404 and 405; the guard still comes first', async () => {
  const s = await serve({ fallback: (req, res, url) => send(res, 418, JSON.stringify({ route: `${req.method} ${url.pathname}` })) });
  try {
    assert.deepEqual(await call(s.address, 'GET', '/nowhere').then((a) => [a.status, a.body]), [418, '{"route":"GET /nowhere"}']);
    assert.deepEqual(await call(s.address, 'DELETE', '/thing').then((a) => [a.status, a.body]), [418, '{"route":"DELETE /thing"}']);
    assert.equal((await call(s.address, 'GET', '/nowhere', { auth: null })).status, 401);
  } finally {
    s.pod.life.stop();
    await s.pod.stopped;
  }
});

test('refusals keep the connection unless closeOnRefusal says otherwise', async () => {
  const keep = await serve();
  const close = await serve({ closeOnRefusal: true });
  const agent = new Agent({ keepAlive: true });
  try {
    assert.equal((await call(keep.address, 'GET', '/nowhere', { agent })).headers.connection, 'keep-alive');
    assert.equal((await call(keep.address, 'GET', '/thing', { auth: null, agent })).headers.connection, 'keep-alive');
    assert.equal((await call(close.address, 'GET', '/nowhere', { agent })).headers.connection, 'close');
    assert.equal((await call(close.address, 'GET', '/thing', { auth: null, agent })).headers.connection, 'close');
    assert.equal((await call(close.address, 'GET', '/thing', { agent })).headers.connection, 'keep-alive', 'a route answers as it likes');
  } finally {
    agent.destroy();
    for (const s of [keep, close]) {
      s.pod.life.stop();
      await s.pod.stopped;
    }
  }
});

test('a token digest that is not 64 lowercase hex is refused at construction; a route is registered once', () => {
  assert.throws(() => new PodServer({ tokenSha256: DIGEST.toUpperCase(), requestTimeoutMs: 0, life: { idleMs: 1, graceMs: 1 } }), /64 lowercase hex/);
  const pod = new PodServer({ tokenSha256: DIGEST, requestTimeoutMs: 0, life: { idleMs: 1, graceMs: 1 } });
  pod.route('GET', '/x', () => {});
  assert.throws(() => pod.route('GET', '/x', () => {}), /has a route already/);
});
