/**
 * A refusal is answered as a refusal, whatever the body's size: through Node's `fetch` (undici),
 * bodies of 0, 1 KiB, 3 MiB and 32 MiB to a missing folder (404 not_found), to `../x.bin` (400
 * bad_path, before any Job), as a resent session part (409 upload_offset_mismatch) and as a part
 * with a wrong digest (400 digest_mismatch). A receiver that refuses at once closes its side while
 * the function still sends; the function must still pass its answer on, and the caller must get it
 * (not a reset).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { BatchV1Api } from '@kubernetes/client-node';
import { q, startStack, TOKEN, type Stack } from './support/stack.ts';

const SIZES = [0, 1 << 10, 3 << 20, 32 << 20];
const digest = (b: Buffer) => `sha-256=:${createHash('sha256').update(b).digest('base64')}:`;
const body = (n: number) => Buffer.alloc(n, 0x61);

describe('refusals answered whatever the body size', () => {
  let s: Stack;
  let batch: BatchV1Api;
  before(async () => {
    s = await startStack({ browse: {}, uploads: { idleSeconds: 120, lifetimeSeconds: 600 } });
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
    assert.deepEqual([...(await names())].filter((n) => !before.has(n)), [], 'no Job was created');
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
});
