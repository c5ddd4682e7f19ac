import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { ExportTimeoutError, requestDownload } from './pod.ts';

/** A loopback port that nothing listens on right now. */
async function freePort(): Promise<number> {
  const s = http.createServer();
  s.listen(0, '127.0.0.1');
  await once(s, 'listening');
  const { port } = s.address() as AddressInfo;
  s.close();
  await once(s, 'close');
  return port;
}

test('a download asked of a Pod whose program is not listening yet is answered once it listens, with only the token and range headers sent', async () => {
  const port = await freePort();
  const seen: http.IncomingHttpHeaders[] = [];
  const server = http.createServer((req, res) => {
    seen.push(req.headers);
    res.writeHead(206, { 'content-range': 'bytes 0-1/10' });
    res.end('ab');
  });
  const late = setTimeout(() => server.listen(port, '127.0.0.1'), 150);
  try {
    const res = await requestDownload('127.0.0.1', port, 'tok', Date.now() + 5_000, new AbortController().signal, { range: 'bytes=0-1', ifRange: '"e"' });
    const body: Buffer[] = [];
    for await (const c of res) body.push(c as Buffer);
    assert.equal(res.statusCode, 206);
    assert.equal(Buffer.concat(body).toString(), 'ab');
    assert.equal(seen.length, 1);
    assert.equal(seen[0]!.authorization, 'Bearer tok');
    assert.equal(seen[0]!.range, 'bytes=0-1');
    assert.equal(seen[0]!['if-range'], '"e"');
  } finally {
    clearTimeout(late);
    server.close();
  }
});

test('a Pod that never listens ends the retries at the deadline as export_timeout', async () => {
  const port = await freePort();
  const t = Date.now();
  await assert.rejects(requestDownload('127.0.0.1', port, 'tok', t + 300, new AbortController().signal), ExportTimeoutError);
  const took = Date.now() - t;
  assert.ok(took >= 250 && took < 2_000, `gave up after ${took} ms, for a deadline 300 ms away`);
});

test('a caller that goes away stops the retries with its own reason', async () => {
  const port = await freePort();
  const ac = new AbortController();
  setTimeout(() => ac.abort(new Error('caller gone')), 100);
  await assert.rejects(requestDownload('127.0.0.1', port, 'tok', Date.now() + 10_000, ac.signal), /caller gone/);
});
