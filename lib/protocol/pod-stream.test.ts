import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { getEventListeners } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { after, test } from 'node:test';
import { DomainError } from '../errors.ts';
import { streamToPod } from './pod-stream.ts';

/** A Pod that refuses every request on its headers (then drops the rest, as the receivers do). */
async function refusingPod(close: boolean): Promise<number> {
  const server = http.createServer((req, res) => {
    req.resume();
    if (close) res.setHeader('connection', 'close');
    res.writeHead(409, { 'content-type': 'application/json', 'content-length': 2 });
    res.end('{}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  after(() => {
    server.closeAllConnections();
    server.close();
  });
  return (server.address() as AddressInfo).port;
}

const bodyOf = (n: number) => {
  let left = n;
  return new Readable({
    read() {
      if (left <= 0) return void this.push(null);
      const c = Buffer.alloc(Math.min(left, 64 << 10));
      left -= c.length;
      this.push(c);
    },
  });
};

test('an answer given on the headers is the answer, whatever the body size, and the rest of the body is left to drain', async () => {
  const port = await refusingPod(false);
  for (const n of [0, 1 << 10, 3 << 20, 32 << 20]) {
    const body = bodyOf(n);
    const a = await streamToPod({ host: '127.0.0.1', port, method: 'PUT', path: '/p', headers: {}, body: { stream: body, size: n }, signal: new AbortController().signal, maxAnswerBytes: 100 });
    assert.deepEqual(a, { status: 409, text: '{}' }, `${n} bytes`);
    // Drained to its end, not destroyed part way (which would cut the caller's connection).
    if (!body.readableEnded) await new Promise((r) => body.once('end', r));
    assert.equal(body.errored, null);
  }
});

test('a body that pauses longer than the idle limit is 408 upload_stalled, at once after it', async () => {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.end('{}'));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  after(() => {
    server.closeAllConnections();
    server.close();
  });
  const port = (server.address() as AddressInfo).port;
  const body = new Readable({ read() {} });
  body.push(Buffer.alloc(10 << 10));
  const t0 = performance.now();
  await assert.rejects(
    streamToPod({ host: '127.0.0.1', port, method: 'PUT', path: '/p', headers: {}, body: { stream: body, size: 256 << 10 }, signal: new AbortController().signal, maxAnswerBytes: 100, idleMs: 300 }),
    (e: unknown) => e instanceof DomainError && e.errorKind === 'stalled' && e.code === 'upload_stalled',
  );
  const ms = performance.now() - t0;
  assert.ok(ms >= 290 && ms < 2_000, `${ms} ms`);
});

test('a Pod that goes away while the caller is silent ends the wait at once', async () => {
  const server = http.createServer((req) => {
    req.resume();
    setTimeout(() => req.socket.destroy(), 100);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  after(() => {
    server.closeAllConnections();
    server.close();
  });
  const port = (server.address() as AddressInfo).port;
  const body = new Readable({ read() {} });
  body.push(Buffer.alloc(1 << 10));
  const t0 = performance.now();
  await assert.rejects(
    streamToPod({
      host: '127.0.0.1',
      port,
      method: 'PUT',
      path: '/p',
      headers: {},
      body: { stream: body, size: 256 << 10 },
      signal: new AbortController().signal,
      maxAnswerBytes: 100,
      idleMs: 10_000,
    }),
  );
  assert.ok(performance.now() - t0 < 2_000, 'waited for the caller instead');
});

/** A Pod that answers the SHA-256 of the body it read, and how many bytes that was. */
async function hashingPod(): Promise<number> {
  const server = http.createServer((req, res) => {
    const h = createHash('sha256');
    let n = 0;
    req.on('data', (c: Buffer) => {
      h.update(c);
      n += c.length;
    });
    req.on('end', () => res.end(JSON.stringify({ sha256: h.digest('hex'), bytes: n })));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  after(() => {
    server.closeAllConnections();
    server.close();
  });
  return (server.address() as AddressInfo).port;
}

test('a body of many chunks of every size reaches the Pod whole and in order, and leaves no listener on the signal', async () => {
  const port = await hashingPod();
  const chunks: Buffer[] = [];
  for (let n = 0; n < 8 << 20; ) {
    const c = randomBytes(1 + Math.floor(Math.random() * 100_000));
    chunks.push(c);
    n += c.length;
  }
  const whole = Buffer.concat(chunks);
  const signal = new AbortController().signal;
  const a = await streamToPod({
    host: '127.0.0.1',
    port,
    method: 'PUT',
    path: '/p',
    headers: {},
    body: { stream: Readable.from(chunks), size: whole.length },
    signal,
    maxAnswerBytes: 1000,
    idleMs: 5_000,
  });
  assert.equal(a.status, 200);
  assert.deepEqual(JSON.parse(a.text), { sha256: createHash('sha256').update(whole).digest('hex'), bytes: whole.length });
  assert.equal(getEventListeners(signal, 'abort').length, 0);
});

test('a Pod that reads nothing holds the caller back: its body is read only a bounded amount ahead', async () => {
  const server = http.createServer((req) => req.pause());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  after(() => {
    server.closeAllConnections();
    server.close();
  });
  const port = (server.address() as AddressInfo).port;
  const size = 256 << 20;
  let pulled = 0;
  const body = new Readable({
    read() {
      if (pulled >= size) return void this.push(null);
      pulled += 64 << 10;
      this.push(Buffer.alloc(64 << 10));
    },
  });
  const ac = new AbortController();
  const sent = streamToPod({ host: '127.0.0.1', port, method: 'PUT', path: '/p', headers: {}, body: { stream: body, size }, signal: ac.signal, maxAnswerBytes: 100 });
  // Wait until the reading stops: the socket buffers are full and the read-ahead is reached.
  let last = -1;
  for (let i = 0; i < 50 && pulled !== last; i++) {
    last = pulled;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(pulled, last, 'the body was still being read');
  // Loopback socket buffers hold a few MiB each way; what is read beyond them is the read-ahead.
  assert.ok(pulled < 32 << 20, `${pulled >> 20} MiB of the body were read ahead of a Pod that read none`);
  ac.abort();
  await assert.rejects(sent);
});

test('the idle limit counts each wait for the caller afresh: a body that keeps coming is never stalled, one that stops is', async () => {
  const port = await hashingPod();
  const trickle = (chunks: number, end: boolean) => {
    const body = new Readable({ read() {} });
    let i = 0;
    const t = setInterval(() => {
      body.push(Buffer.from([i]));
      if (++i < chunks) return;
      clearInterval(t);
      if (end) body.push(null);
    }, 120);
    return body;
  };
  // 12 chunks 120 ms apart, 1.4 s in all, under a 300 ms limit: each wait is short.
  const whole = await streamToPod({
    host: '127.0.0.1',
    port,
    method: 'PUT',
    path: '/p',
    headers: {},
    body: { stream: trickle(12, true), size: 12 },
    signal: new AbortController().signal,
    maxAnswerBytes: 1000,
    idleMs: 300,
  });
  assert.equal(JSON.parse(whole.text).bytes, 12);
  // 6 chunks, then silence: stalled about 300 ms after the last.
  const t0 = performance.now();
  await assert.rejects(
    streamToPod({
      host: '127.0.0.1',
      port,
      method: 'PUT',
      path: '/p',
      headers: {},
      body: { stream: trickle(6, false), size: 12 },
      signal: new AbortController().signal,
      maxAnswerBytes: 1000,
      idleMs: 300,
    }),
    (e: unknown) => e instanceof DomainError && e.code === 'upload_stalled',
  );
  const ms = performance.now() - t0;
  assert.ok(ms >= 6 * 120 + 280 && ms < 3_000, `${ms} ms`);
});
