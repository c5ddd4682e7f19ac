import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { test } from 'node:test';
import { send } from './answer.ts';
import { PodServer, type PodServerOptions, whenAnswered } from './listen.ts';

const TOKEN = 'the-job-token';
const DIGEST = createHash('sha256').update(TOKEN).digest('hex');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function get(a: AddressInfo, path: string): Promise<{ status: number; connection: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: a.address, port: a.port, path, headers: { authorization: `Bearer ${TOKEN}`, connection: 'keep-alive' }, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection }));
    });
    req.on('error', reject);
    req.end();
  });
}

function pod(extra: Partial<PodServerOptions<'done'>> = {}): PodServer<'done'> {
  return new PodServer<'done'>({ tokenSha256: DIGEST, requestTimeoutMs: 5_000, life: { idleMs: 60_000, graceMs: 5_000 }, ...extra });
}

test('a stop lets the request in hand finish, refuses new connections, and settles stopped with its reason once it is answered', async () => {
  const p = pod();
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  p.route('GET', '/slow', async (_req, res) => {
    await held;
    send(res, 200, '{}');
  });
  const a = await p.listen(0, '127.0.0.1');
  const slow = get(a, '/slow');
  await sleep(30);
  p.life.stop('done');
  let settled = false;
  void p.stopped.then(() => (settled = true));
  await assert.rejects(get(a, '/slow'), /ECONNREFUSED/);
  await sleep(30);
  assert.equal(settled, false, 'not stopped while a request is in hand');
  release();
  assert.equal((await slow).status, 200);
  assert.equal(await p.stopped, 'done');
});

test('while stopping, and always for a one-request mode, answers close their connection', async () => {
  const p = pod();
  p.route('GET', '/x', (_req, res) => send(res, 200, '{}'));
  const a = await p.listen(0, '127.0.0.1');
  assert.equal((await get(a, '/x')).connection, 'keep-alive');
  // A request whose head ends after the stop began, on a connection opened before it.
  const sock = net.connect(a.port, a.address);
  await new Promise((r) => sock.once('connect', r));
  sock.write(`GET /x HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\n`);
  await sleep(20);
  p.life.stop('done');
  let head = '';
  sock.on('data', (c: Buffer) => (head += c.toString()));
  sock.write('\r\n');
  await new Promise((r) => sock.once('close', r));
  assert.match(head, /^HTTP\/1\.1 200/);
  assert.match(head, /\r\nConnection: close\r\n/i);
  await p.stopped;

  const one = pod({ oneRequestPerConnection: true });
  one.route('GET', '/x', (_req, res) => send(res, 200, '{}'));
  const b = await one.listen(0, '127.0.0.1');
  assert.equal((await get(b, '/x')).connection, 'close');
  one.life.stop();
  assert.equal(await one.stopped, 'signal');
});

test('a socket that sends nothing for socketIdleMs is cut, mid-body too', async () => {
  const p = pod({ socketIdleMs: 100, requestTimeoutMs: 0 });
  let got = 0;
  let aborted = false;
  p.route('PUT', '/in', (req) => {
    req.on('data', (c: Buffer) => (got += c.length));
    req.on('close', () => (aborted = !req.complete));
  });
  const a = await p.listen(0, '127.0.0.1');
  const sock = net.connect(a.port, a.address);
  try {
    await new Promise((r) => sock.once('connect', r));
    sock.write(`PUT /in HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Length: 10\r\n\r\nabc`);
    const t = performance.now();
    const closed = new Promise((r) => sock.once('close', () => r('cut')));
    assert.equal(await Promise.race([closed, sleep(2_000).then(() => 'still open')]), 'cut');
    assert.ok(performance.now() - t >= 90, 'not cut before the idle period');
    await sleep(20);
    assert.equal(got, 3);
    assert.equal(aborted, true, 'the body ended unfinished');
  } finally {
    sock.destroy();
    p.life.stop();
    await p.stopped;
  }
});

test('whenAnswered runs once the answer is out, or at once when the response is already gone', async () => {
  const p = pod();
  const order: string[] = [];
  let answered: import('node:http').ServerResponse | undefined;
  p.route('GET', '/x', (_req, res) => {
    answered = res;
    send(res, 200, '{}');
    order.push('sent');
    whenAnswered(res, () => order.push('answered'));
    order.push('returned');
  });
  const a = await p.listen(0, '127.0.0.1');
  await get(a, '/x');
  await sleep(10);
  assert.deepEqual(order.slice(0, 2), ['sent', 'returned']);
  assert.ok(order.includes('answered'));
  let late = false;
  whenAnswered(answered!, () => (late = true));
  assert.equal(late, true, 'a response already out runs it at once');
  p.life.stop();
  await p.stopped;
});
