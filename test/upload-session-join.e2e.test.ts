/**
 * An upload session holds the world only while bytes are being placed, on both tiers: while a
 * session is idle between parts another change lands at once (not after 30 s of waiting, nor a 409),
 * and the session then goes on and lands whole; while a part is being sent (a slow body), a change
 * waits its turn in the world's line and lands after it; a start with an idle session starts, a part
 * while the server runs is 409 not_stopped, and once the server is stopped again the session carries
 * on where it was.
 */

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { getServer, STOPPED, setServer } from './support/servers.ts';
import { q, type Stack, startStack, TOKEN, tierMs } from './support/stack.ts';

const S = '/api/v1/servers/survival';
const QUEUE = 'felis.lolicon.best/files-queue';
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const b64 = (b: Buffer) => createHash('sha256').update(b).digest('base64');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Deterministic bytes. */
function bytes(n: number, seed: number): Buffer {
  const b = Buffer.alloc(n);
  for (let i = 0; i + 4 <= n; i += 4) b.writeUInt32LE(((i + seed) * 2654435761) >>> 0, i);
  return b;
}

describe('an upload session holds the world only while bytes are placed', () => {
  let s: Stack;
  before(async () => {
    s = await startStack({ browse: {}, uploads: { idleSeconds: 120, lifetimeSeconds: 600 } });
  });
  after(async () => {
    await s?.close();
  });

  const write = (path: string, text: string) => {
    const b = Buffer.from(text);
    return s.call('PUT', `${S}/file?path=${q(path)}`, { content: b.toString('base64'), content_sha256: sha(b) });
  };

  /** One part, its body given whole or as a stream of chunks. */
  const sendPart = (id: string, off: number, p: Buffer, body: Buffer | ReadableStream<Uint8Array> = p) =>
    fetch(`${s.url}${S}/files/uploads/${id}?offset=${off}`, {
      method: 'PUT',
      body,
      headers: { authorization: `Bearer ${TOKEN}`, 'content-length': String(p.length), 'content-digest': `sha-256=:${b64(p)}:` },
      duplex: 'half',
    } as RequestInit).then(async (r) => ({ status: r.status, body: JSON.parse(await r.text()), at: Date.now() }));

  /** Until no receiver counts as the server's session any more (a commit's receiver ends just after it answered). */
  async function noSession(): Promise<void> {
    const end = Date.now() + tierMs(15_000, 60_000);
    for (;;) {
      const r = await s.call('POST', `${S}/files/uploads?path=${q('probe.bin')}`, { size: 1 });
      if (r.status === 201) {
        assert.equal((await s.call('DELETE', `${S}/files/uploads/${r.body.id}`)).status, 204);
        return;
      }
      assert.equal(r.body.error.code, 'too_many_uploads', r.text);
      if (Date.now() > end) throw new Error('a receiver still counts as the session');
      await sleep(200);
    }
  }

  test('while the session is idle between parts, another write lands at once; then the next part and the commit land the file whole', async () => {
    const one = bytes(1 << 20, 1);
    const two = bytes(300_000, 2);
    const whole = Buffer.concat([one, two]);
    const b = await s.call('POST', `${S}/files/uploads?path=${q('plugins/joined.bin')}`, { size: whole.length });
    assert.equal(b.status, 201, b.text);
    const id = b.body.id as string;
    const p1 = await sendPart(id, 0, one);
    assert.equal(p1.status, 200, JSON.stringify(p1.body));
    // Nothing holds the world while the session waits for its next part.
    const holder = await s.call('GET', `${S}/holder`);
    assert.equal(holder.body.held, false, holder.text);
    const t0 = Date.now();
    const w = await write('between-parts.txt', 'written while a session was open\n');
    assert.equal(w.status, 200, w.text);
    assert.ok(Date.now() - t0 < tierMs(10_000, 20_000), `the write took ${Date.now() - t0} ms: it must not wait for the session`);
    assert.equal(readFileSync(join(s.world, 'between-parts.txt'), 'utf8'), 'written while a session was open\n');
    // The session is listed as the running upload it is.
    const ops = (await s.call('GET', `${S}/files/ops`)).body.ops as { op: string; path: string; state: string }[];
    assert.ok(
      ops.some((o) => o.op === 'upload' && o.path === 'plugins/joined.bin' && o.state === 'running'),
      JSON.stringify(ops),
    );
    const p2 = await sendPart(id, one.length, two);
    assert.equal(p2.status, 200, JSON.stringify(p2.body));
    const done = await s.call('POST', `${S}/files/uploads/${id}/commit`, { sha256: sha(whole) });
    assert.equal(done.status, 202, done.text);
    assert.equal(done.body.op.op, 'upload');
    assert.equal(sha(readFileSync(join(s.world, 'plugins/joined.bin'))), sha(whole));
    await noSession();
  });

  test('while a part is being sent, a write waits its turn and lands after it', async () => {
    const part = bytes(600_000, 3);
    const b = await s.call('POST', `${S}/files/uploads?path=${q('slow.bin')}`, { size: part.length });
    assert.equal(b.status, 201, b.text);
    const id = b.body.id as string;
    // A slow body: ten slices over about three seconds.
    const slices = 10;
    const size = Math.ceil(part.length / slices);
    let i = 0;
    const slow = new ReadableStream<Uint8Array>({
      async pull(c) {
        if (i > 0) await sleep(300);
        if (i >= slices) return c.close();
        c.enqueue(part.subarray(i * size, (i + 1) * size));
        i++;
      },
    });
    const sending = sendPart(id, 0, part, slow);
    // The part has its turn: its ticket is in the world's line (it holds the world while its bytes go).
    const end = Date.now() + tierMs(10_000, 30_000);
    while (!(await getServer(s.cluster, 'survival')).metadata.annotations?.[QUEUE]) {
      assert.ok(Date.now() < end, 'the part never took its turn');
      await sleep(20);
    }
    const w = write('during-part.txt', 'after the part\n').then((r) => ({ ...r, at: Date.now() }));
    const [p, written] = await Promise.all([sending, w]);
    assert.equal(p.status, 200, JSON.stringify(p.body));
    assert.equal(p.body.received, part.length);
    assert.equal(written.status, 200, written.text);
    assert.ok(written.at >= p.at, `the write answered ${p.at - written.at} ms before the part it waited for`);
    assert.equal(readFileSync(join(s.world, 'during-part.txt'), 'utf8'), 'after the part\n');
    const done = await s.call('POST', `${S}/files/uploads/${id}/commit`, { sha256: sha(part) });
    assert.equal(done.status, 202, done.text);
    assert.equal(sha(readFileSync(join(s.world, 'slow.bin'))), sha(part));
    await noSession();
  });

  test('a start with an idle session starts; a part while the server runs is 409 not_stopped; stopped again, the session carries on', async () => {
    const one = bytes(200_000, 4);
    const two = bytes(100_000, 5);
    const whole = Buffer.concat([one, two]);
    const b = await s.call('POST', `${S}/files/uploads?path=${q('across-start.bin')}`, { size: whole.length });
    assert.equal(b.status, 201, b.text);
    const id = b.body.id as string;
    assert.equal((await sendPart(id, 0, one)).status, 200);
    try {
      const started = await s.call('POST', `${S}/start`);
      assert.equal(started.status, 202, started.text);
      assert.equal(started.body.desiredState, 'Running');
      const refused = await sendPart(id, one.length, two);
      assert.equal(refused.status, 409, JSON.stringify(refused.body));
      assert.equal(refused.body.error.code, 'not_stopped');
      // Its status is a read: still answered, nothing lost.
      const st = await s.call('GET', `${S}/files/uploads/${id}`);
      assert.equal(st.status, 200, st.text);
      assert.equal(st.body.received, one.length);
    } finally {
      await setServer(s.cluster, 'survival', STOPPED);
    }
    const p2 = await sendPart(id, one.length, two);
    assert.equal(p2.status, 200, JSON.stringify(p2.body));
    assert.equal(p2.body.received, whole.length);
    const done = await s.call('POST', `${S}/files/uploads/${id}/commit`, { sha256: sha(whole) });
    assert.equal(done.status, 202, done.text);
    assert.equal(sha(readFileSync(join(s.world, 'across-start.bin'))), sha(whole));
  });
});
