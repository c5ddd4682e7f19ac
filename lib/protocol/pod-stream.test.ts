import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
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
  await assert.rejects(streamToPod({ host: '127.0.0.1', port, method: 'PUT', path: '/p', headers: {}, body: { stream: body, size: 256 << 10 }, signal: new AbortController().signal, maxAnswerBytes: 100, idleMs: 10_000 }));
  assert.ok(performance.now() - t0 < 2_000, 'waited for the caller instead');
});
