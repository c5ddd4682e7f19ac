/**
 * A refusal is answered as a refusal, whatever the body's size: through Node's `fetch` (undici),
 * bodies of 0, 1 KiB, 3 MiB and 32 MiB to a missing folder (404 not_found), to `../x.bin` (400
 * bad_path, before any Job), as a resent session part (409 upload_offset_mismatch) and as a part
 * with a wrong digest (400 digest_mismatch). A receiver that refuses at once closes its side while
 * the function still sends; the function must still pass its answer on, and the caller must get it
 * (not a reset).
 */

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { BatchV1Api } from '@kubernetes/client-node';
import { q, type Stack, startStack, TOKEN } from './support/stack.ts';

const SIZES = [0, 1 << 10, 3 << 20, 32 << 20];
/** The body idle limit of this stack (FELIS_UPLOAD_BODY_IDLE_SECONDS), small so the stall tests are quick. */
const BODY_IDLE_S = 3;

/**
 * A PUT with a declared length that sends `sent` bytes and then goes silent, keeping the
 * connection open; answers what came back and when (ms after the last byte), or 'none' by `waitMs`.
 */
function stalledPut(url: string, declared: number, sent: number, digestHeader: string, waitMs: number): Promise<{ status: number; code?: string; ms: number } | 'none'> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = http.request({
      host: u.hostname,
      port: u.port,
      path: u.pathname + u.search,
      method: 'PUT',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-length': String(declared), 'content-digest': digestHeader },
    });
    let t0 = 0;
    const timer = setTimeout(() => {
      req.destroy();
      resolve('none');
    }, waitMs);
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        clearTimeout(timer);
        const ms = performance.now() - t0;
        req.destroy();
        const text = Buffer.concat(chunks).toString();
        resolve({ status: res.statusCode ?? 0, code: text ? JSON.parse(text).error?.code : undefined, ms });
      });
    });
    req.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    req.write(Buffer.alloc(sent, 0x62), () => (t0 = performance.now()));
  });
}
const digest = (b: Buffer) => `sha-256=:${createHash('sha256').update(b).digest('base64')}:`;
const body = (n: number) => Buffer.alloc(n, 0x61);

describe('refusals answered whatever the body size', () => {
  let s: Stack;
  let batch: BatchV1Api;
  before(async () => {
    s = await startStack({ browse: {}, uploads: { idleSeconds: 120, lifetimeSeconds: 600, bodyIdleSeconds: BODY_IDLE_S } });
    batch = s.cluster.kubeConfig(s.cluster.adminToken).makeApiClient(BatchV1Api);
  });
  after(async () => {
    await s?.close();
  });

  const send = async (url: string, b: Buffer, headers: Record<string, string> = {}) => {
    const res = await fetch(s.url + url, { method: 'PUT', body: b, headers: { authorization: `Bearer ${TOKEN}`, 'content-digest': digest(b), ...headers } });
    const text = await res.text();
    return { status: res.status, code: text ? (JSON.parse(text).error?.code as string | undefined) : undefined, text };
  };

  test('a single upload into a folder that does not exist: 404 not_found, at every size', async () => {
    for (const n of SIZES) {
      const r = await send(`/api/v1/servers/survival/files/upload?path=${q(`no-such-folder/x-${n}.bin`)}`, body(n));
      assert.equal(r.status, 404, `${n} bytes: ${r.text}`);
      assert.equal(r.code, 'not_found', `${n} bytes`);
      assert.match(r.text, /folder no-such-folder does not exist/, `${n} bytes`);
    }
    assert.ok(!existsSync(join(s.world, 'no-such-folder')));
  });

  test('a single upload to ../x.bin: 400 bad_path at every size, and no Job', async () => {
    const names = async () => new Set((await batch.listNamespacedJob({ namespace: 'minecraft' })).items.map((j) => j.metadata!.name!));
    const before = await names();
    for (const n of SIZES) {
      const r = await send(`/api/v1/servers/survival/files/upload?path=${q('../x.bin')}`, body(n));
      assert.equal(r.status, 400, `${n} bytes: ${r.text}`);
      assert.equal(r.code, 'bad_path', `${n} bytes`);
    }
    assert.deepEqual(
      [...(await names())].filter((n) => !before.has(n)),
      [],
      'no Job was created',
    );
  });

  test('a session part sent again (409 upload_offset_mismatch) or with a wrong digest (400 digest_mismatch), at every size', async () => {
    const total = 64 << 20;
    const b = await s.call('POST', `/api/v1/servers/survival/files/uploads?path=${q('plugins/refusals.bin')}`, { size: total });
    assert.equal(b.status, 201, b.text);
    const id = b.body.id as string;
    const first = body(1 << 10);
    const ok = await send(`/api/v1/servers/survival/files/uploads/${id}?offset=0`, first);
    assert.equal(ok.status, 200, ok.text);
    for (const n of SIZES) {
      // Offset 0 again: the session holds 1 KiB.
      const again = await send(`/api/v1/servers/survival/files/uploads/${id}?offset=0`, body(n));
      assert.equal(again.status, 409, `${n} bytes: ${again.text}`);
      assert.equal(again.code, 'upload_offset_mismatch', `${n} bytes`);
      const wrong = await send(`/api/v1/servers/survival/files/uploads/${id}?offset=${1 << 10}`, body(n), { 'content-digest': digest(Buffer.from('something else')) });
      assert.equal(wrong.status, 400, `${n} bytes: ${wrong.text}`);
      assert.equal(wrong.code, 'digest_mismatch', `${n} bytes`);
    }
    const st = await s.call('GET', `/api/v1/servers/survival/files/uploads/${id}`);
    assert.equal(st.body.received, 1 << 10, 'no refused part was kept');
    assert.equal((await s.call('DELETE', `/api/v1/servers/survival/files/uploads/${id}`)).status, 204);
  });

  test('a single upload that sends 10 KiB of 256 KiB and goes silent is answered 408 upload_stalled within the idle limit, and a write right after succeeds', async () => {
    const r = await stalledPut(`${s.url}/api/v1/servers/survival/files/upload?path=${q('plugins/stalled.bin')}`, 256 << 10, 10 << 10, digest(body(256 << 10)), (BODY_IDLE_S + 15) * 1000);
    assert.notEqual(r, 'none', 'no answer');
    if (r === 'none') return;
    assert.equal(r.status, 408);
    assert.equal(r.code, 'upload_stalled');
    assert.ok(r.ms < (BODY_IDLE_S + 3) * 1000, `answered ${Math.round(r.ms)} ms after the last byte`);
    // The lock is given back: a write right after is not refused as held.
    const w = await s.call('PUT', `/api/v1/servers/survival/file?path=${q('after-stall.txt')}`, {
      content: Buffer.from('ok').toString('base64'),
      content_sha256: createHash('sha256').update('ok').digest('hex'),
    });
    assert.equal(w.status, 200, w.text);
    assert.ok(!existsSync(join(s.world, 'plugins/stalled.bin')), 'nothing was placed');
  });

  test('a session part that stalls is answered 408 upload_stalled, and the same part sent whole right after is taken', async () => {
    const b = await s.call('POST', `/api/v1/servers/survival/files/uploads?path=${q('plugins/stalled-part.bin')}`, { size: 256 << 10 });
    assert.equal(b.status, 201, b.text);
    const id = b.body.id as string;
    const whole = body(256 << 10);
    const r = await stalledPut(`${s.url}/api/v1/servers/survival/files/uploads/${id}?offset=0`, whole.length, 10 << 10, digest(whole), (BODY_IDLE_S + 15) * 1000);
    assert.notEqual(r, 'none', 'no answer');
    if (r === 'none') return;
    assert.equal(r.status, 408);
    assert.equal(r.code, 'upload_stalled');
    assert.ok(r.ms < (BODY_IDLE_S + 3) * 1000, `answered ${Math.round(r.ms)} ms after the last byte`);
    const again = await send(`/api/v1/servers/survival/files/uploads/${id}?offset=0`, whole);
    assert.equal(again.status, 200, again.text);
    assert.equal((await s.call('DELETE', `/api/v1/servers/survival/files/uploads/${id}`)).status, 204);
  });
});
