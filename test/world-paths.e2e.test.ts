/**
 * The one path rule end to end (lib/protocol/world-path.ts): a leading `/` is the world folder, as
 * panels shaped like Wings send every path, through `?path=` and body fields alike; an escape is
 * refused in one wording naming what was sent.
 */

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { waitOp } from './support/ops.ts';
import { FUNCTION_USER, q, type Stack, startStack, TOKEN } from './support/stack.ts';

describe('a leading / is the world folder', () => {
  let s: Stack;
  let origin: http.Server;
  let base: string;
  before(async () => {
    origin = http.createServer((_req, res) => void res.writeHead(200, { 'content-length': 5 }).end('hello'));
    await new Promise<void>((r) => origin.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`;
    s = await startStack({ editor: { pullEnv: { FELIS_PULL_ALLOW: '127.0.0.1' } }, browse: {} });
  });
  after(async () => {
    await s?.close();
    origin?.closeAllConnections();
    origin?.close();
  });

  test('?path=/world lists world; ?path=/ lists the root', async () => {
    const w = await s.call('GET', `/api/v1/servers/survival/files?path=${q('/world')}`);
    assert.equal(w.status, 200, w.text);
    assert.equal(w.body.path, 'world');
    assert.deepEqual(w.body.entries.map((e: { name: string }) => e.name).sort(), ['level.dat', 'region']);
    const root = await s.call('GET', `/api/v1/servers/survival/files?path=${q('/')}`);
    assert.equal(root.status, 200, root.text);
    assert.equal(root.body.path, '');
    assert.ok(
      root.body.entries.some((e: { name: string }) => e.name === 'eula.txt'),
      root.text,
    );
    const read = await s.call('GET', `/api/v1/servers/survival/file?path=${q('/world/level.dat')}`);
    assert.equal(read.status, 200, read.text);
    assert.equal(read.body.path, 'world/level.dat');
  });

  test('a batch delete of /q1.txt deletes q1.txt', async () => {
    writeFileSync(join(s.world, 'q1.txt'), 'q');
    const r = await s.call('POST', '/api/v1/servers/survival/files/delete', { paths: ['/q1.txt'] });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body.done, ['q1.txt']);
    assert.equal(existsSync(join(s.world, 'q1.txt')), false);
  });

  test('a compress of /eula.txt packs eula.txt in the root', async () => {
    const r = await s.call('POST', '/api/v1/servers/survival/files/compress', { paths: ['/eula.txt'], format: 'zip', name: 'eula.zip' });
    assert.equal(r.status, 202, r.text);
    const op = await waitOp(s, r.body.op.id);
    assert.equal(op.state, 'succeeded', JSON.stringify(op));
    assert.equal(existsSync(join(s.world, 'eula.zip')), true);
  });

  test('a pull into / lands in the root', async () => {
    const r = await s.call('POST', '/api/v1/servers/survival/files/pull', { url: `${base}/hello.txt`, path: '/', name: 'pulled.txt' });
    assert.equal(r.status, 202, r.text);
    const op = await waitOp(s, r.body.op.id);
    assert.equal(op.state, 'succeeded', JSON.stringify(op));
    assert.equal(existsSync(join(s.world, 'pulled.txt')), true);
  });

  test('an escape is refused before any Job, in one wording naming what was sent', async () => {
    s.cluster.resetCounts();
    const cases: [method: string, url: string, body: unknown, sent: string][] = [
      ['GET', `/api/v1/servers/survival/files?path=${q('/../x')}`, undefined, '/../x'],
      ['GET', `/api/v1/servers/survival/file?path=${q('../x')}`, undefined, '../x'],
      ['POST', '/api/v1/servers/survival/files/delete', { paths: ['/world/../../x'] }, '/world/../../x'],
      ['POST', '/api/v1/servers/survival/files/compress', { paths: ['/../eula.txt'], format: 'zip' }, '/../eula.txt'],
      ['POST', `/api/v1/servers/survival/files/rename?path=eula.txt`, { to: '/../eula.txt' }, '/../eula.txt'],
      ['POST', '/api/v1/servers/survival/files/pull', { url: `${base}/x`, path: '/..' }, '/..'],
    ];
    for (const [method, url, body, sent] of cases) {
      const r = await s.call(method, url, body);
      assert.equal(r.status, 400, `${url}: ${r.text}`);
      assert.equal(r.body.error.code, 'bad_path', r.text);
      assert.equal(r.body.error.message, `${JSON.stringify(sent)}: the path leads out of the world`, r.text);
    }
    assert.equal(s.cluster.counts(FUNCTION_USER)['create jobs'] ?? 0, 0);
  });

  test('a missing parent folder is named as the folder', async () => {
    const digest = (b: string) => `sha-256=:${createHash('sha256').update(b).digest('base64')}:`;
    const up = await fetch(`${s.url}/api/v1/servers/survival/files/upload?path=${q('/arch/pack.zip')}`, {
      method: 'PUT',
      body: 'zip',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-digest': digest('zip') },
    });
    const upBody = (await up.json()) as { error: { message: string } };
    assert.equal(up.status, 404, JSON.stringify(upBody));
    assert.equal(upBody.error.message, 'folder arch does not exist');
    const cases: [method: string, url: string, body: unknown][] = [
      ['PUT', `/api/v1/servers/survival/file?path=${q('/arch/a.txt')}`, { content: 'YQ==', content_sha256: createHash('sha256').update('a').digest('hex') }],
      ['POST', `/api/v1/servers/survival/files/mkdir?path=${q('/arch/sub')}`, undefined],
      ['POST', `/api/v1/servers/survival/files/copy?path=eula.txt`, { to: '/arch/eula.txt' }],
      ['POST', `/api/v1/servers/survival/files/rename?path=eula.txt`, { to: '/arch/eula.txt' }],
    ];
    for (const [method, url, body] of cases) {
      const r = await s.call(method, url, body);
      assert.equal(r.status, 404, `${url}: ${r.text}`);
      assert.equal(r.body.error.message, 'folder arch does not exist', url);
    }
  });

  test('the root where an op needs a path inside it is a bad_path naming what was sent', async () => {
    const r = await s.call('GET', `/api/v1/servers/survival/file?path=${q('/')}`);
    assert.equal(r.status, 400, r.text);
    assert.equal(r.body.error.code, 'bad_path');
    assert.equal(r.body.error.message, '"/": the path names the world folder itself; name a file or folder inside it');
  });
});
