/**
 * Uploads end to end, through the real client-node: a body streamed by the function to a receiver
 * Job's Pod and placed in the world; a body that lies changes nothing; the receiver holds the world
 * while it works and nothing is left once it is done.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { BatchV1Api, CoreV1Api } from '@kubernetes/client-node';
import { LABEL_FILES_RECEIVE } from '../lib/job-spec/upload-job.ts';
import { startStack, q, REAL, tierMs, TOKEN, type Stack } from './support/stack.ts';

const RECEIVE = `${LABEL_FILES_RECEIVE}=true`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const b64 = (b: Buffer) => createHash('sha256').update(b).digest('base64');
const hex = (b: Buffer) => createHash('sha256').update(b).digest('hex');

async function until<T>(fn: () => Promise<T | undefined>, what: string, ms: number): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** Every name under `dir`, recursively. */
function names(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' });
}

describe('uploads', () => {
  let s: Stack;
  let core: CoreV1Api;
  let batch: BatchV1Api;
  before(async () => {
    // Uploads use the same shared job key as browse sessions; a short TTL so finished Jobs go.
    s = await startStack({ browse: {}, editor: { ttlSeconds: 2 } });
    const kc = s.cluster.kubeConfig(s.cluster.adminToken);
    core = kc.makeApiClient(CoreV1Api);
    batch = kc.makeApiClient(BatchV1Api);
  });
  after(async () => {
    await s?.close();
  });

  const put = (path: string, body: Buffer, headers: Record<string, string> = {}) =>
    fetch(`${s.url}/api/v1/servers/survival/files/upload?path=${q(path)}${headers['x-overwrite'] ? '&overwrite=true' : ''}`, {
      method: 'PUT',
      body,
      headers: { authorization: `Bearer ${TOKEN}`, 'content-digest': `sha-256=:${b64(body)}:`, ...headers },
    });

  test('a 20 MiB single upload lands whole, hashed, owned as the editor owns files, through one receiver Job', async () => {
    const data = Buffer.alloc(20 << 20);
    for (let i = 0; i < data.length; i += 4096) data.writeUInt32LE(i * 2654435761 >>> 0, i);
    const res = await put('plugins/big.jar', data);
    const text = await res.text();
    assert.equal(res.status, 200, text);
    assert.deepEqual(JSON.parse(text), { path: 'plugins/big.jar', status: 'uploaded', sha256: hex(data), size: data.length });
    const onDisk = readFileSync(join(s.world, 'plugins/big.jar'));
    assert.equal(hex(onDisk), hex(data));
    assert.equal(statSync(join(s.world, 'plugins/big.jar')).mode & 0o777, 0o644);
    const jobs = (await batch.listNamespacedJob({ namespace: 'minecraft', labelSelector: RECEIVE })).items;
    assert.equal(jobs.length, 1);
    assert.equal(jobs[0]!.metadata!.labels!['felis.lolicon.best/files-mode'], 'upload');
    assert.ok(!JSON.stringify(jobs[0]).includes('Bearer'), 'no token in the Job');
    // A second upload to the same path without overwrite: 409, the file unchanged.
    const again = await put('plugins/big.jar', Buffer.from('small'));
    assert.equal(again.status, 409, await again.text());
    assert.equal(hex(readFileSync(join(s.world, 'plugins/big.jar'))), hex(data));
  });

  test('a body that does not match its digest changes nothing and leaves no working file', async () => {
    const before = readFileSync(join(s.world, 'server.properties'));
    const body = Buffer.from('motd=replaced\n');
    const res = await put('server.properties', body, { 'x-overwrite': '1', 'content-digest': `sha-256=:${b64(Buffer.from('other'))}:` });
    const text = await res.text();
    assert.equal(res.status, 400, text);
    assert.equal(JSON.parse(text).error.code, 'digest_mismatch');
    assert.deepEqual(readFileSync(join(s.world, 'server.properties')), before);
    assert.deepEqual(names(s.world).filter((n) => n.includes('.felis-edit-')), []);
    // Refusals before any Job: no digest, no length (chunked).
    const noDigest = await fetch(`${s.url}/api/v1/servers/survival/files/upload?path=a.txt`, { method: 'PUT', body, headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(noDigest.status, 400);
    assert.equal(((await noDigest.json()) as { error: { code: string } }).error.code, 'digest_required');
    assert.ok(!existsSync(join(s.world, 'a.txt')));
  });

  test('once done, no receiver Pod or Job is left, and the world is free', async () => {
    await until(async () => ((await core.listNamespacedPod({ namespace: 'minecraft', labelSelector: RECEIVE })).items.every((p) => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed') ? true : undefined), 'the receiver Pods to end', tierMs(15_000, 60_000));
    await until(async () => ((await batch.listNamespacedJob({ namespace: 'minecraft', labelSelector: RECEIVE })).items.length === 0 ? true : undefined), 'the receiver Jobs to go', tierMs(15_000, 60_000));
    const h = await s.call('GET', '/api/v1/servers/survival/holder');
    assert.equal(h.body.held, false, h.text);
    if (!REAL) {
      const cluster = s.cluster as unknown as { podAddressesInUse(): number };
      await until(async () => (cluster.podAddressesInUse() === 0 ? true : undefined), 'the kubelet to end every Pod', 5000);
    }
  });
});
