/**
 * Uploads end to end, through the real client-node: a body streamed by the function to a receiver
 * Job's Pod and placed in the world; a body that lies changes nothing; a single upload's receiver
 * holds the world while it works, a session's holds nothing between its calls, and nothing is left
 * once it is done.
 */

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { BatchV1Api, CoreV1Api } from '@kubernetes/client-node';
import { LABEL_FILES_RECEIVE } from '../lib/job-spec/upload-job.ts';
import { q, REAL, type Stack, startStack, TOKEN, tierMs, until } from './support/stack.ts';

const RECEIVE = `${LABEL_FILES_RECEIVE}=true`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const b64 = (b: Buffer) => createHash('sha256').update(b).digest('base64');
const hex = (b: Buffer) => createHash('sha256').update(b).digest('hex');

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
    // Session receivers stay listed as long as background ops do: short here too, but long enough
    // that the lost receiver's Job is still there when the next part resumes the session (the new
    // receiver's Job takes the session's path from it). The embedded cluster runs TTLs at 1/100.
    s = await startStack({ browse: {}, editor: { ttlSeconds: 2, asyncTtlSeconds: REAL ? 10 : 600 }, uploads: { idleSeconds: 20, lifetimeSeconds: 600 } });
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
    for (let i = 0; i < data.length; i += 4096) data.writeUInt32LE((i * 2654435761) >>> 0, i);
    const res = await put('plugins/big.jar', data);
    const text = await res.text();
    assert.equal(res.status, 200, text);
    assert.deepEqual(JSON.parse(text), { path: 'plugins/big.jar', status: 'uploaded', sha256: hex(data), size: data.length });
    const onDisk = readFileSync(join(s.world, 'plugins/big.jar'));
    assert.equal(hex(onDisk), hex(data));
    assert.equal(statSync(join(s.world, 'plugins/big.jar')).mode & 0o777, 0o644);
    // The answer comes once the receiver Job is finished: the world is free at once. The Job itself
    // may already be gone (its TTL is short); while it is there it is the one upload Job, without
    // a token (the spec's labels and token digest are checked in lib/job-spec/upload-job.test.ts).
    const holder = await s.call('GET', '/api/v1/servers/survival/holder');
    assert.equal(holder.body.held, false, holder.text);
    const jobs = (await batch.listNamespacedJob({ namespace: 'minecraft', labelSelector: RECEIVE })).items;
    assert.ok(jobs.length <= 1, `${jobs.length} receiver Jobs`);
    for (const j of jobs) {
      assert.equal(j.metadata!.labels!['felis.lolicon.best/files-mode'], 'upload');
      assert.ok(!JSON.stringify(j).includes('Bearer'), 'no token in the Job');
    }
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
    assert.deepEqual(
      names(s.world).filter((n) => n.includes('.felis-edit-')),
      [],
    );
    // Refusals before any Job: no digest, no length (chunked).
    const noDigest = await fetch(`${s.url}/api/v1/servers/survival/files/upload?path=a.txt`, { method: 'PUT', body, headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(noDigest.status, 400);
    assert.equal(((await noDigest.json()) as { error: { code: string } }).error.code, 'digest_required');
    assert.ok(!existsSync(join(s.world, 'a.txt')));
  });

  test('a 200 MiB session: parts, one broken off and resent, the receiver Pod lost and resumed, the world free between calls, committed whole', async () => {
    const size = 200 << 20;
    const PART = 32 << 20;
    // Deterministic bytes, generated per part (never the whole file in memory at once beyond one part).
    const partAt = (off: number) => {
      const b = Buffer.alloc(Math.min(PART, size - off));
      for (let i = 0; i < b.length; i += 8) b.writeUInt32LE(((off + i) * 2654435761) >>> 0, i);
      return b;
    };
    const whole = createHash('sha256');
    for (let off = 0; off < size; off += PART) whole.update(partAt(off));
    const expected = whole.digest('hex');

    const begun = await s.call('POST', `/api/v1/servers/survival/files/uploads?path=${q('worlds/big.bin')}`, { size });
    assert.equal(begun.status, 404, 'the folder must exist');
    const b = await s.call('POST', `/api/v1/servers/survival/files/uploads?path=${q('plugins/big-session.bin')}`, { size });
    assert.equal(b.status, 201, b.text);
    const id = b.body.id as string;
    assert.match(id, /^[0-9a-f]{32}$/);
    assert.equal((await s.call('POST', `/api/v1/servers/survival/files/uploads?path=${q('plugins/other.bin')}`, { size: 1 })).body.error.code, 'too_many_uploads');
    // The session holds nothing between its calls (a start would go ahead: test/upload-session-join.e2e.test.ts).
    const holder = await s.call('GET', '/api/v1/servers/survival/holder');
    assert.equal(holder.body.held, false, holder.text);
    // A receiver hashes every byte twice for as long as the session lasts: it gets the background
    // ops' CPU (1 by default), not a one-shot op's 500m.
    const [receiver] = (await batch.listNamespacedJob({ namespace: 'minecraft', labelSelector: `felis.lolicon.best/upload-session=${id}` })).items;
    assert.equal(receiver!.spec!.template.spec!.containers[0]!.resources!.limits!.cpu, '1');

    const sendPart = async (off: number, body: Buffer | ReadableStream<Uint8Array>, len: number, digestOf: Buffer, signal?: AbortSignal) =>
      fetch(`${s.url}/api/v1/servers/survival/files/uploads/${id}?offset=${off}`, {
        method: 'PUT',
        body,
        signal,
        headers: { authorization: `Bearer ${TOKEN}`, 'content-length': String(len), 'content-digest': `sha-256=:${b64(digestOf)}:` },
        duplex: 'half',
      } as RequestInit).then(async (r) => ({ status: r.status, body: JSON.parse(await r.text()) }));

    let off = 0;
    let broke = false;
    let lost = false;
    while (off < size) {
      const p = partAt(off);
      if (!broke && off === PART) {
        // A simulated break: half the part, then the connection goes.
        broke = true;
        const ac = new AbortController();
        const half = new ReadableStream<Uint8Array>({
          start(c) {
            c.enqueue(p.subarray(0, p.length >> 1));
          },
        });
        const cut = sendPart(off, half, p.length, p, ac.signal).catch(() => undefined);
        await sleep(300);
        ac.abort();
        await Promise.race([cut, sleep(2000)]);
        const st = await until(
          async () => {
            const v = await s.call('GET', `/api/v1/servers/survival/files/uploads/${id}`);
            return v.status === 200 ? v : undefined;
          },
          'the status',
          10_000,
        );
        assert.equal(st.body.received, PART, 'the broken part was not kept');
      }
      if (!lost && off === 3 * PART) {
        // The receiver Pod is lost: the next part starts a new receiver that resumes from the disk.
        lost = true;
        const pods = (await core.listNamespacedPod({ namespace: 'minecraft', labelSelector: `felis.lolicon.best/upload-session=${id}` })).items;
        assert.equal(pods.length, 1);
        await core.deleteNamespacedPod({ namespace: 'minecraft', name: pods[0]!.metadata!.name!, gracePeriodSeconds: 0 });
        await until(
          async () =>
            (await core.listNamespacedPod({ namespace: 'minecraft', labelSelector: `felis.lolicon.best/upload-session=${id}` })).items.every((x) => x.status?.phase !== 'Running') ? true : undefined,
          'the receiver Pod to go',
          tierMs(15_000, 60_000),
        );
      }
      const r = await sendPart(off, p, p.length, p);
      assert.equal(r.status, 200, `part at ${off}: ${JSON.stringify(r.body)}`);
      off += p.length;
      assert.equal(r.body.received, off);
    }
    const v = await s.call('GET', `/api/v1/servers/survival/files/uploads/${id}`);
    assert.equal(v.body.parts.length, Math.ceil(size / PART));
    // While it lives, the session is a running upload in the ops listing, its progress read from
    // the receiver's log.
    const live = await until(
      async () => {
        const ops = (await s.call('GET', '/api/v1/servers/survival/files/ops')).body.ops as { op: string; path: string; state: string; done: number; total: number }[];
        const running = ops.find((o) => o.state === 'running');
        return running?.done === size ? running : undefined;
      },
      'the session to show its progress in the ops listing',
      tierMs(10_000, 30_000),
    );
    assert.deepEqual(
      { ...live, id: undefined, started_at: undefined },
      { id: undefined, op: 'upload', path: 'plugins/big-session.bin', state: 'running', started_at: undefined, done: size, total: size },
    );
    const done = await s.call('POST', `/api/v1/servers/survival/files/uploads/${id}/commit`, { overwrite: false, sha256: expected });
    // Felis's answer: 202 with the upload as an op; a panel then follows it in the ops listing.
    assert.equal(done.status, 202, done.text);
    assert.equal(done.body.sha256, expected);
    const op = done.body.op;
    assert.equal(op.op, 'upload');
    assert.equal(op.path, 'plugins/big-session.bin');
    const listed = await until(
      async () => {
        const ops = await s.call('GET', '/api/v1/servers/survival/files/ops');
        const o = (ops.body.ops as { id: string; state: string; finished_at: string }[]).find((x) => x.id === op.id);
        return o?.state === 'succeeded' ? o : undefined;
      },
      'the committed upload to show as succeeded in the ops listing',
      tierMs(15_000, 60_000),
    );
    assert.deepEqual(listed, { ...op, state: 'succeeded', finished_at: listed.finished_at, done: size, total: size, files: 1, bytes: size });
    if (op.state === 'succeeded') assert.deepEqual(listed, op, 'the commit answered the op as the listing shows it');
    const h = createHash('sha256');
    h.update(readFileSync(join(s.world, 'plugins/big-session.bin')));
    assert.equal(h.digest('hex'), expected);
    assert.deepEqual(
      names(s.world).filter((n) => n.includes('.felis-edit-')),
      [],
      'no staging left',
    );
    const gone = await s.call('GET', `/api/v1/servers/survival/files/uploads/${id}`);
    assert.equal(gone.status, 404, gone.text);
  });

  test('an abandoned session ends by itself and leaves nothing behind', async () => {
    // The previous session's receiver ends shortly after its commit answered (on a loaded machine
    // it can take longer than the commit waits); until then a new session is the second one.
    await until(
      async () =>
        (await core.listNamespacedPod({ namespace: 'minecraft', labelSelector: RECEIVE })).items.every((p) => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed') ? true : undefined,
      'the earlier receivers to end',
      tierMs(15_000, 60_000),
    );
    const b = await s.call('POST', `/api/v1/servers/survival/files/uploads?path=${q('plugins/abandoned.bin')}`, { size: 10 });
    assert.equal(b.status, 201, b.text);
    const id = b.body.id as string;
    const p = Buffer.from('01234');
    const r = await fetch(`${s.url}/api/v1/servers/survival/files/uploads/${id}?offset=0`, {
      method: 'PUT',
      body: p,
      headers: { authorization: `Bearer ${TOKEN}`, 'content-digest': `sha-256=:${b64(p)}:` },
    });
    assert.equal(r.status, 200, await r.text());
    const cancelled = await s.call('POST', `/api/v1/servers/survival/files/uploads?path=${q('plugins/cancelled.bin')}`, { size: 10 });
    assert.equal(cancelled.status, 429);
    await until(
      async () =>
        (await core.listNamespacedPod({ namespace: 'minecraft', labelSelector: `felis.lolicon.best/upload-session=${id}` })).items.every(
          (x) => x.status?.phase === 'Succeeded' || x.status?.phase === 'Failed',
        )
          ? true
          : undefined,
      'the idle session to end',
      tierMs(40_000, 90_000),
    );
    assert.deepEqual(
      names(s.world).filter((n) => n.includes('.felis-edit-') || n.includes('abandoned')),
      [],
    );
  });

  test('a folder uploaded file by file with parents=true: every folder made 0755, each file whole; a file in the way, an escape and no parents refused', async () => {
    const putParents = (path: string, body: Buffer, parents = 'true') =>
      fetch(`${s.url}/api/v1/servers/survival/files/upload?path=${q(path)}${parents ? `&parents=${parents}` : ''}`, {
        method: 'PUT',
        body,
        headers: { authorization: `Bearer ${TOKEN}`, 'content-digest': `sha-256=:${b64(body)}:` },
      }).then(async (r) => ({ status: r.status, body: JSON.parse(await r.text()) }));
    const tree: Record<string, Buffer> = {
      'modpack/config/a.toml': Buffer.from('a = 1\n'),
      'modpack/config/deep/er/c.json': Buffer.from('{"c":true}\n'),
      'modpack/mods/b.jar': Buffer.alloc(300_000, 0x42),
    };
    for (const [path, body] of Object.entries(tree)) {
      const r = await putParents(path, body);
      assert.equal(r.status, 200, `${path}: ${JSON.stringify(r.body)}`);
      assert.deepEqual(r.body, { path, status: 'uploaded', sha256: hex(body), size: body.length });
    }
    for (const [path, body] of Object.entries(tree)) assert.equal(hex(readFileSync(join(s.world, path))), hex(body), path);
    for (const d of ['modpack', 'modpack/config', 'modpack/config/deep', 'modpack/config/deep/er', 'modpack/mods']) {
      const st = statSync(join(s.world, d));
      assert.ok(st.isDirectory(), d);
      assert.equal(st.mode & 0o777, 0o755, d);
    }
    // Without parents (or with another value) a missing folder is still 404, and nothing is made.
    for (const v of ['', 'yes']) {
      const r = await putParents('fresh/x.txt', Buffer.from('x'), v);
      assert.equal(r.status, 404, JSON.stringify(r.body));
      assert.equal(r.body.error.code, 'not_found');
    }
    assert.ok(!existsSync(join(s.world, 'fresh')));
    // A file where a folder must be: 400 bad_path, nothing made in or beside it.
    const inFile = await putParents('server.properties/x/y.txt', Buffer.from('x'));
    assert.equal(inFile.status, 400, JSON.stringify(inFile.body));
    assert.equal(inFile.body.error.code, 'bad_path');
    assert.ok(statSync(join(s.world, 'server.properties')).isFile());
    // An escape is refused before any Job.
    const out = await putParents('../outside/x.txt', Buffer.from('x'));
    assert.equal(out.status, 400);
    assert.equal(out.body.error.code, 'bad_path');
    assert.deepEqual(
      names(s.world).filter((n) => n.includes('.felis-edit-')),
      [],
      'no working file left',
    );
  });

  test('a session begun with parents=true makes the folders and lands the file there', async () => {
    await until(
      async () =>
        (await core.listNamespacedPod({ namespace: 'minecraft', labelSelector: RECEIVE })).items.every((p) => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed') ? true : undefined,
      'the earlier receivers to end',
      tierMs(40_000, 90_000),
    );
    const data = Buffer.alloc(1 << 20);
    for (let i = 0; i < data.length; i += 4) data.writeUInt32LE((i * 2654435761) >>> 0, i);
    const path = 'worlds/new-map/region/r.0.0.mca';
    const plain = await s.call('POST', `/api/v1/servers/survival/files/uploads?path=${q(path)}`, { size: data.length });
    assert.equal(plain.status, 404, plain.text);
    assert.ok(!existsSync(join(s.world, 'worlds')));
    const b = await until(
      async () => {
        const r = await s.call('POST', `/api/v1/servers/survival/files/uploads?path=${q(path)}&parents=true`, { size: data.length });
        return r.status === 429 ? undefined : r;
      },
      "the refused begin's receiver to end",
      tierMs(15_000, 60_000),
    );
    assert.equal(b.status, 201, b.text);
    assert.equal(b.body.path, path);
    assert.ok(statSync(join(s.world, 'worlds/new-map/region')).isDirectory(), 'made at the begin');
    const id = b.body.id as string;
    const r = await fetch(`${s.url}/api/v1/servers/survival/files/uploads/${id}?offset=0`, {
      method: 'PUT',
      body: data,
      headers: { authorization: `Bearer ${TOKEN}`, 'content-digest': `sha-256=:${b64(data)}:` },
    });
    assert.equal(r.status, 200, await r.text());
    const done = await s.call('POST', `/api/v1/servers/survival/files/uploads/${id}/commit`, { sha256: hex(data) });
    assert.equal(done.status, 202, done.text);
    assert.equal(hex(readFileSync(join(s.world, path))), hex(data));
    assert.equal(statSync(join(s.world, 'worlds/new-map')).mode & 0o777, 0o755);
    assert.deepEqual(
      names(s.world).filter((n) => n.includes('.felis-edit-')),
      [],
      'no staging left',
    );
  });

  test('once done, no receiver Pod or Job is left, and the world is free', async () => {
    await until(
      async () =>
        (await core.listNamespacedPod({ namespace: 'minecraft', labelSelector: RECEIVE })).items.every((p) => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed') ? true : undefined,
      'the receiver Pods to end',
      tierMs(15_000, 60_000),
    );
    await until(
      async () => ((await batch.listNamespacedJob({ namespace: 'minecraft', labelSelector: RECEIVE })).items.length === 0 ? true : undefined),
      'the receiver Jobs to go',
      tierMs(30_000, 60_000),
    );
    const h = await s.call('GET', '/api/v1/servers/survival/holder');
    assert.equal(h.body.held, false, h.text);
    if (!REAL) {
      const cluster = s.cluster as unknown as { podAddressesInUse(): number };
      await until(async () => (cluster.podAddressesInUse() === 0 ? true : undefined), 'the kubelet to end every Pod', 5000);
    }
  });
});
