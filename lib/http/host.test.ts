import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import type { Server } from 'node:http';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { z } from 'zod';
import { jsonBody } from './file-request.ts';
import { createLogger } from '../log.ts';
import { createApp } from './app.ts';
import { listen } from './host.ts';

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
      assert.deepEqual(lines.filter((l) => l.level >= 50), []);
    } finally {
      await new Promise<void>((res) => server.close(() => res()));
    }
  });
});
