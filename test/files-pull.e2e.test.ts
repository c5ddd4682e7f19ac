/**
 * Pulls end to end: HTTP → files-pull → client-node → the cluster → a pull Job running the real
 * Job program (dist/felis.mjs) → a loopback HTTP server in this test, reached only through the
 * explicit test-only rule FELIS_PULL_ALLOW=127.0.0.1. Nothing here addresses anything but loopback;
 * 169.254.169.254 appears only as a redirect target the guard refuses before connecting.
 */

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ended, waitOp } from './support/ops.ts';
import { type Stack, startStack } from './support/stack.ts';

const body = Buffer.alloc(2 << 20, 'felis');

/** The loopback origin: a file, redirects (one to the metadata address), and a slow endless answer. */
async function origin() {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    hits.push(req.url ?? '');
    const path = (req.url ?? '').split('?')[0];
    if (path === '/mod.jar') return void res.writeHead(200, { 'content-length': body.length }).end(body);
    if (path === '/to-metadata') return void res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
    if (path === '/slow.bin') {
      res.writeHead(200, { 'content-length': 1 << 30 });
      const t = setInterval(() => res.write(Buffer.alloc(16 << 10)), 20);
      res.on('close', () => clearInterval(t));
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits, close: () => (server.closeAllConnections(), server.close()) };
}

/** Editor working files and folders (a pull's staging among them), not the withheld ledger. */
const working = (dir: string) => readdirSync(dir).filter((n) => /^\.felis-edit-[0-9a-f]{12}$/.test(n));

describe('pulls through the cluster, loopback allowed by the operator', () => {
  let s: Stack;
  let o: Awaited<ReturnType<typeof origin>>;
  before(async () => {
    o = await origin();
    // browse: the shared job key, which the pull Job's cancel call needs.
    s = await startStack({ editor: { pullEnv: { FELIS_PULL_ALLOW: '127.0.0.1', FELIS_PULL_IDLE_TIMEOUT_SECONDS: '30' } }, browse: {} });
  });
  after(async () => {
    await s?.close();
    o?.close();
  });

  test('a pull lands with its bytes; the op shows them and where it landed', async () => {
    const r = await s.call('POST', '/api/v1/servers/survival/files/pull', { url: `${o.base}/mod.jar?sig=x`, path: 'plugins' });
    assert.equal(r.status, 202, r.text);
    const op = await waitOp(s, r.body.op.id, ended);
    assert.equal(op.state, 'succeeded', JSON.stringify(op));
    assert.equal(op.to, 'plugins/mod.jar');
    const file = join(s.world, 'plugins', 'mod.jar');
    assert.equal(createHash('sha256').update(readFileSync(file)).digest('hex'), createHash('sha256').update(body).digest('hex'));
    assert.deepEqual(working(join(s.world, 'plugins')), []);
    assert.deepEqual(working(s.world), [], 'its staging went with the placement');
    // There is no overwrite: the same pull again is refused, nothing changed.
    const again = await s.call('POST', '/api/v1/servers/survival/files/pull', { url: `${o.base}/mod.jar`, path: 'plugins' });
    const second = await waitOp(s, again.body.op.id, ended);
    assert.equal(second.error?.code, 'file_exists', JSON.stringify(second));
  });

  test('a redirect to 169.254.169.254 is refused before connecting; nothing placed', async () => {
    const r = await s.call('POST', '/api/v1/servers/survival/files/pull', { url: `${o.base}/to-metadata`, path: 'plugins', name: 'meta.txt' });
    assert.equal(r.status, 202, r.text);
    const op = await waitOp(s, r.body.op.id, ended);
    assert.equal(op.state, 'failed');
    assert.equal(op.error?.code, 'pull_refused');
    assert.match(op.error!.message, /169\.254\.169\.254.*link-local/);
    assert.equal(existsSync(join(s.world, 'plugins', 'meta.txt')), false);
  });

  // A pull holds no world (docs/pulls.md): a second one while one downloads is admitted, not 409.
  test('a second pull while one downloads is admitted and lands; cancel ends the first pull_cancelled with nothing left', async () => {
    const r = await s.call('POST', '/api/v1/servers/survival/files/pull', { url: `${o.base}/slow.bin`, path: 'plugins' });
    assert.equal(r.status, 202, r.text);
    const id = r.body.op.id as string;
    await waitOp(s, id, (x) => x.done > 0 || ended(x));
    const second = await s.call('POST', '/api/v1/servers/survival/files/pull', { url: `${o.base}/mod.jar`, path: '', name: 'other.jar' });
    assert.equal(second.status, 202, second.text);
    const other = await waitOp(s, second.body.op.id, ended);
    assert.deepEqual([other.state, other.to], ['succeeded', 'other.jar'], JSON.stringify(other));
    assert.equal(readFileSync(join(s.world, 'other.jar')).length, body.length);
    const cancel = await s.call('DELETE', `/api/v1/servers/survival/files/pull/${id}`);
    assert.equal(cancel.status, 202, cancel.text);
    const op = await waitOp(s, id, ended);
    assert.equal(op.error?.code, 'pull_cancelled', JSON.stringify(op));
    assert.equal(existsSync(join(s.world, 'plugins', 'slow.bin')), false);
    assert.deepEqual(working(join(s.world, 'plugins')), []);
    assert.deepEqual(working(s.world), [], 'the cancelled pull removed its staging');
    const late = await s.call('DELETE', `/api/v1/servers/survival/files/pull/${id}`);
    assert.equal(late.status, 409);
    assert.equal(late.body.error.code, 'pull_not_running');
  });
});

describe('pulls through the cluster, no allow rule', () => {
  test('http://127.0.0.1:… is refused with a clear code; the origin never sees a request; nothing placed', async () => {
    const o = await origin();
    const s = await startStack();
    try {
      const r = await s.call('POST', '/api/v1/servers/survival/files/pull', { url: `${o.base}/mod.jar`, path: 'plugins', name: 'loop.jar' });
      assert.equal(r.status, 202, r.text);
      const op = await waitOp(s, r.body.op.id, ended);
      assert.equal(op.error?.code, 'pull_refused', JSON.stringify(op));
      assert.match(op.error!.message, /127\.0\.0\.1.*loopback/);
      assert.deepEqual(o.hits, []);
      assert.equal(existsSync(join(s.world, 'plugins', 'loop.jar')), false);
    } finally {
      await s.close();
      o.close();
    }
  });
});
