/**
 * Edges a fuzz found, through the whole stack: malformed percent-encoding in `?path=`, malformed
 * Host headers, and the editor's working files left by a killed Job.
 */

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, utimesSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { FUNCTION_USER, type Stack, startStack } from './support/stack.ts';

const sha = (b: string) => createHash('sha256').update(b).digest('hex');

describe('request edges', () => {
  let s: Stack;
  before(async () => {
    s = await startStack();
  });
  after(async () => {
    await s?.close();
  });

  test('malformed percent-encoding in ?path= is 400 bad_request before any Job, and creates no file', async () => {
    s.cluster.resetCounts();
    for (const bad of ['%FF', '%E0%A4%A', '%C0%AF', '%%']) {
      const w = await s.call('PUT', `/api/v1/servers/survival/file?path=${bad}`, { content: '', content_sha256: sha('') });
      assert.equal(w.status, 400, `${bad}: ${w.text}`);
      assert.equal(w.body.error.code, 'bad_request');
      assert.ok(w.headers.get('x-request-id'));
      const r = await s.call('GET', `/api/v1/servers/survival/file?path=${bad}`);
      assert.equal(r.status, 400, `${bad}: ${r.text}`);
    }
    assert.equal(s.cluster.counts(FUNCTION_USER)['create jobs'] ?? 0, 0);
    for (const literal of ['%FF', '%E0%A4%A', '%C0%AF', '%%']) assert.equal(existsSync(join(s.world, literal)), false);
  });

  test('a malformed Host header gets the envelope and an X-Request-Id', async () => {
    const port = Number(new URL(s.url).port);
    const answer = await new Promise<string>((res, rej) => {
      const c = net.connect(port, '127.0.0.1');
      let d = '';
      c.on('data', (x) => (d += x));
      c.on('error', rej);
      c.on('close', () => res(d));
      c.end('GET /api/v1/servers/survival/files HTTP/1.1\r\nHost: bad host\r\nConnection: close\r\n\r\n');
    });
    assert.match(answer, /^HTTP\/1\.1 400 /);
    assert.match(answer, /\r\nx-request-id: [0-9a-f-]{36}\r\n/i);
    assert.match(answer, /"code":"bad_request"/);
  });

  test('working files left by a killed write are hidden from listings, and the next write in their folder removes the stale one', async () => {
    const stale = join(s.world, 'config/.felis-edit-00112233aabb');
    const fresh = join(s.world, 'config/.felis-edit-00112233aabc');
    writeFileSync(stale, 'half a write');
    writeFileSync(fresh, 'a write in flight');
    const old = Date.now() / 1000 - 600;
    utimesSync(stale, old, old);
    const l = await s.call('GET', '/api/v1/servers/survival/files?path=config');
    assert.equal(l.status, 200, l.text);
    assert.deepEqual(
      l.body.entries.filter((e: { name: string }) => e.name.startsWith('.felis-edit-')),
      [],
    );
    const r = await s.call('GET', '/api/v1/servers/survival/file?path=config/.felis-edit-00112233aabb');
    assert.equal(r.status, 404, r.text);
    const w = await s.call('PUT', '/api/v1/servers/survival/file?path=config/notes.txt', { content: Buffer.from('hi').toString('base64'), content_sha256: sha('hi') });
    assert.equal(w.status, 200, w.text);
    assert.equal(existsSync(stale), false);
    assert.equal(existsSync(fresh), true);
  });
});
