import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import net from 'node:net';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { z } from 'zod';
import { createLogger } from '../log.ts';
import { createApp } from './app.ts';
import { jsonBody } from './file-request.ts';
import { listen, SERVER_TIMEOUTS, type ServerTimeouts, scaledTimeouts, serverTimeoutsFromEnv } from './host.ts';

/** Sends raw bytes on a fresh connection and returns everything the server wrote before closing. */
function raw(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => (sock.destroy(), reject(new Error('no answer within 3 s'))), 3000);
    sock.on('data', (c) => chunks.push(c));
    sock.on('error', reject);
    sock.on('close', () => (clearTimeout(timer), resolve(Buffer.concat(chunks).toString('latin1'))));
    sock.write(bytes);
    // Half-close only after the server had the chance to answer a complete request.
    setTimeout(() => sock.end(), 300);
  });
}

function parse(answer: string): { status: number; headers: Record<string, string>; body: any } {
  const [head, ...rest] = answer.split('\r\n\r\n');
  const lines = head!.split('\r\n');
  const status = Number(lines[0]!.split(' ')[1]);
  const headers = Object.fromEntries(lines.slice(1).map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
  const text = rest.join('\r\n');
  return { status, headers, body: JSON.parse(text.slice(text.indexOf('{'), text.lastIndexOf('}') + 1)) };
}

describe('every answer of the listener carries the envelope and an X-Request-Id', () => {
  let server: Server;
  let port = 0;
  before(async () => {
    const logger = createLogger('t', { LOG_LEVEL: 'silent' });
    const app = createApp({ logger, token: () => 'token-0123456789' }, (a) => a.get('/api/v1/ping', (c) => c.text('pong')));
    await new Promise<void>((res) => {
      server = listen(app, { port: 0, hostname: '127.0.0.1', logger }, (addr) => ((port = addr.port), res()));
    });
  });
  after(() => new Promise<void>((res) => server.close(() => res())));

  const expectEnvelope = (answer: string, status: number, code: string) => {
    const r = parse(answer);
    assert.equal(r.status, status, answer);
    assert.match(r.headers['content-type']!, /^application\/json/);
    assert.match(r.headers['x-request-id']!, /^[0-9a-f-]{36}$/);
    assert.equal(r.body.error.code, code);
    assert.equal(r.body.error.request_id, r.headers['x-request-id']);
  };

  test('a well-formed request reaches the app (and its answers have the request id)', async () => {
    const r = parse(await raw(port, 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n'));
    assert.equal(r.status, 200);
    assert.ok(r.headers['x-request-id']);
  });

  test('malformed Host headers are 400 bad_request in the envelope', async () => {
    for (const host of ['exa mple', 'a:b:c:d', '[::1', 'bad\thost', '%zz']) {
      expectEnvelope(await raw(port, `GET /healthz HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`), 400, 'bad_request');
    }
  });

  test('a missing Host header and malformed request lines are 400 bad_request in the envelope', async () => {
    for (const req of [
      'GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n',
      'GET /a b c HTTP/1.1\r\nHost: x\r\n\r\n',
      'NOT-A-METHOD\r\n\r\n',
      'GET / HTTP/9.9\r\nHost: x\r\n\r\n',
      'GET / HTTP/1.1\r\nHost: x\r\nBad Header Name: y\r\n\r\n',
      'GET http://[bad/ HTTP/1.1\r\nHost: x\r\n\r\n',
    ]) {
      expectEnvelope(await raw(port, req), 400, 'bad_request');
    }
  });

  test('headers too large are 431 in the envelope', async () => {
    expectEnvelope(await raw(port, `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`), 431, 'headers_too_large');
  });
});

describe('a caller that goes away mid-body', () => {
  test('is logged at info as the caller going away, never as a server error', async () => {
    const lines: { level: number; msg: string }[] = [];
    const sink = new Writable({
      write(chunk, _e, cb) {
        for (const l of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(l));
        cb();
      },
    });
    const logger = pino({ level: 'info' }, sink);
    let reached: () => void;
    const inRoute = new Promise<void>((r) => (reached = r));
    const app = createApp({ logger, token: () => 'token-0123456789' }, (a) =>
      a.post('/api/v1/echo', async (c) => {
        reached();
        return c.json(await jsonBody(c, z.object({ x: z.string() })));
      }),
    );
    let port = 0;
    const server = await new Promise<Server>((res) => {
      const s = listen(app, { port: 0, hostname: '127.0.0.1', logger }, (addr) => ((port = addr.port), res(s)));
    });
    try {
      const sock = net.connect(port, '127.0.0.1');
      sock.write('POST /api/v1/echo HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer token-0123456789\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"x":"hal');
      await inRoute;
      sock.destroy();
      const end = Date.now() + 3000;
      while (!lines.some((l) => l.msg === 'caller went away')) {
        assert.ok(Date.now() < end, JSON.stringify(lines));
        await new Promise((r) => setTimeout(r, 20));
      }
      assert.equal(lines.find((l) => l.msg === 'caller went away')!.level, 30);
      assert.deepEqual(
        lines.filter((l) => l.level >= 50),
        [],
      );
    } finally {
      await new Promise<void>((res) => server.close(() => res()));
    }
  });
});

/** A listener of an echo app with the given timeouts; log lines are collected. */
async function echoServer(timeouts?: ServerTimeouts): Promise<{ server: Server; port: number; lines: { level: number; msg: string; status?: number }[] }> {
  const lines: { level: number; msg: string; status?: number }[] = [];
  const sink = new Writable({
    write(chunk, _e, cb) {
      for (const l of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(l));
      cb();
    },
  });
  const logger = pino({ level: 'info' }, sink);
  const app = createApp({ logger, token: () => 'token-0123456789' }, (a) => a.post('/api/v1/echo', async (c) => c.text(await c.req.text())));
  let port = 0;
  const server = await new Promise<Server>((res) => {
    const s = listen(app, { port: 0, hostname: '127.0.0.1', logger, ...(timeouts ? { timeouts } : {}) }, (addr) => ((port = addr.port), res(s)));
  });
  return { server, port, lines };
}

const close = (s: Server) => new Promise<void>((res) => (s.closeAllConnections(), s.close(() => res())));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Everything the server writes on one connection until it closes it (or `ms` pass). */
function collect(sock: net.Socket, ms: number): Promise<{ text: string; closed: boolean; at: number }> {
  const t0 = Date.now();
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => resolve({ text: Buffer.concat(chunks).toString('latin1'), closed: false, at: Date.now() - t0 }), ms);
    sock.on('data', (c) => chunks.push(c));
    sock.on('error', () => {});
    sock.on('close', () => (clearTimeout(timer), resolve({ text: Buffer.concat(chunks).toString('latin1'), closed: true, at: Date.now() - t0 })));
  });
}

describe('the server timeouts, chosen for Knative', () => {
  test("the defaults: headers within 20 s, no whole-request limit, keep-alive above queue-proxy's 90 s", () => {
    assert.deepEqual(SERVER_TIMEOUTS, { headersMs: 20_000, requestMs: 0, keepAliveMs: 120_000, checkIntervalMs: 1_000 });
    assert.deepEqual(serverTimeoutsFromEnv({}), SERVER_TIMEOUTS);
    assert.equal(serverTimeoutsFromEnv({ FELIS_HEADERS_TIMEOUT_SECONDS: '5' }).headersMs, 5_000);
    assert.deepEqual(serverTimeoutsFromEnv({ FELIS_HTTP_TIME_SCALE: '0.01' }), { headersMs: 200, requestMs: 0, keepAliveMs: 1_200, checkIntervalMs: 10 });
    assert.throws(() => serverTimeoutsFromEnv({ FELIS_HEADERS_TIMEOUT_SECONDS: 'soon' }), /FELIS_HEADERS_TIMEOUT_SECONDS/);
  });

  test("the live server tells queue-proxy it keeps idle connections longer than queue-proxy's 90 s", async () => {
    const { server, port } = await echoServer();
    try {
      const sock = net.connect(port, '127.0.0.1');
      const got = collect(sock, 2000);
      sock.write('POST /api/v1/echo HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer token-0123456789\r\nContent-Length: 2\r\n\r\nhi');
      await sleep(300);
      sock.destroy();
      const { text } = await got;
      const keepAlive = /\r\nkeep-alive: timeout=(\d+)/i.exec(text);
      assert.ok(keepAlive, text);
      assert.ok(Number(keepAlive[1]) > 90, `Keep-Alive timeout=${keepAlive[1]}`);
      assert.equal(server.requestTimeout, 0, 'no whole-request limit');
    } finally {
      await close(server);
    }
  });

  test('a caller too slow to send its headers gets 408 request_timeout in the envelope within the bound, logged at info', async () => {
    // 1 s of the server's clock is 10 ms here: the 20 s headers limit is 200 ms, checked every 10 ms.
    const { server, port, lines } = await echoServer(scaledTimeouts(0.01));
    try {
      const sock = net.connect(port, '127.0.0.1');
      const got = collect(sock, 3000);
      sock.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
      const { text, closed, at } = await got;
      assert.ok(closed, 'the server closed the connection');
      // The stated bound is headers (20 s) plus one check (1 s): 210 ms here, plus up to 400 ms for a loaded machine.
      assert.ok(at < 210 + 400, `answered after ${at} ms`);
      const r = parse(text);
      assert.equal(r.status, 408, text);
      assert.equal(r.body.error.code, 'request_timeout');
      assert.equal(r.body.error.request_id, r.headers['x-request-id']);
      const line = lines.find((l) => l.status === 408);
      assert.equal(line?.level, 30, JSON.stringify(lines));
      assert.deepEqual(
        lines.filter((l) => l.level >= 40),
        [],
      );
    } finally {
      await close(server);
    }
  });

  test('an idle kept-alive connection is not answered 408; it is closed quietly after the keep-alive time', async () => {
    const { server, port } = await echoServer(scaledTimeouts(0.01));
    try {
      const sock = net.connect(port, '127.0.0.1');
      const got = collect(sock, 3000);
      sock.write('POST /api/v1/echo HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer token-0123456789\r\nContent-Length: 2\r\n\r\nhi');
      const { text, closed, at } = await got;
      assert.ok(closed);
      assert.ok(at >= 1_000, `closed after ${at} ms, before the keep-alive time (1.2 s scaled)`);
      assert.doesNotMatch(text, / 408 /);
      assert.equal((text.match(/HTTP\/1\.1 /g) ?? []).length, 1, text);
    } finally {
      await close(server);
    }
  });

  test('a body sent slowly for more than 300 s (of a 100x clock) is received whole', async () => {
    const { server, port } = await echoServer(scaledTimeouts(0.01));
    try {
      const sock = net.connect(port, '127.0.0.1');
      const got = collect(sock, 8000);
      const body = 'abcdefghijklmnopq';
      sock.write(`POST /api/v1/echo HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer token-0123456789\r\nConnection: close\r\nContent-Length: ${body.length}\r\n\r\n`);
      // One byte every 200 ms (20 s of the server's clock): 17 bytes take 340 s of it.
      for (const ch of body) {
        await sleep(200);
        sock.write(ch);
      }
      const { text } = await got;
      assert.match(text, /^HTTP\/1\.1 200 /, text);
      assert.ok(text.endsWith(body), text);
    } finally {
      await close(server);
    }
  });
});
