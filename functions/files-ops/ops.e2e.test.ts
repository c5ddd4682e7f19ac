/**
 * Following ops end to end, through HTTP and client-node on the cluster: a page at a time with
 * `limit`, `after` and `next` (every op seen once), one op by the URL its 202's `Location` named
 * (404 `op_not_found` under another server), and an upload session as its op: the same id, and
 * the bytes received as its `done`. The unzips run a scripted stand-in of the file program
 * (test/support/scripted-files-job.ts) that ends at once; the upload's receiver is the real one.
 */

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { V1Container } from '@kubernetes/client-node';
import { waitOp } from '../../test/support/ops.ts';
import { createServer } from '../../test/support/servers.ts';
import { q, ROOT, type Stack, startStack, TOKEN, tierMs } from '../../test/support/stack.ts';

const SCRIPT = join(ROOT, 'test/support/scripted-files-job.ts');
/** The Pods of background file Jobs run the scripted program: a result at once. */
const scripted = (c: V1Container) => (c.name === 'files' && c.args?.includes('--op') ? { command: [process.execPath, SCRIPT, '--result', '{"files":1,"bytes":1}'] } : undefined);
const OPS = '/api/v1/servers/survival/files/ops';

describe('ops you can follow', () => {
  let s: Stack;
  before(async () => {
    s = await startStack({ browse: {}, uploads: { idleSeconds: 60, lifetimeSeconds: 600 } });
    await createServer(s.cluster, 'creative');
  });
  after(async () => {
    s.program = undefined;
    await s?.close();
  });

  const started: { id: string; location: string }[] = [];

  test('seven ops, paged three at a time with limit, after and next: each seen once, newest first', async () => {
    s.program = scripted;
    for (let i = 0; i < 7; i++) {
      const r = await s.call('POST', `/api/v1/servers/survival/files/unzip?path=${q(`pack-${i}.zip`)}`, {});
      assert.equal(r.status, 202, r.text);
      started.push({ id: r.body.op.id, location: r.headers.get('location') ?? '' });
      // Each holds the world while it runs: the next starts once it has ended.
      await waitOp(s, r.body.op.id);
    }
    const pages: string[][] = [];
    let next: string | undefined;
    do {
      const r = await s.call('GET', `${OPS}?limit=3${next ? `&after=${next}` : ''}`);
      assert.equal(r.status, 200, r.text);
      pages.push(r.body.ops.map((o: { id: string }) => o.id));
      next = r.body.next;
      if (next !== undefined) assert.equal(next, pages.at(-1)!.at(-1), 'next is the last id of the page');
    } while (next !== undefined && pages.length < 10);
    assert.deepEqual(
      pages.map((p) => p.length),
      [3, 3, 1],
    );
    assert.deepEqual(pages.flat().sort(), started.map((o) => o.id).sort(), 'every op once');
    // Newest first: Kubernetes times have whole seconds, and ops of the same second come by id.
    const listed = new Map<string, string>((await s.call('GET', `${OPS}?limit=100`)).body.ops.map((o: { id: string; started_at: string }) => [o.id, o.started_at]));
    const times = pages.flat().map((id) => listed.get(id)!);
    assert.deepEqual(times, [...times].sort().reverse(), 'newest first');
    // The default page is the ten newest, as before; a limit out of bounds is refused, naming it.
    assert.equal((await s.call('GET', OPS)).body.ops.length, 7);
    const bad = await s.call('GET', `${OPS}?limit=101`);
    assert.equal(bad.status, 400, bad.text);
    assert.match(bad.body.error.message, /\?limit=/);
    const gone = await s.call('GET', `${OPS}?after=00000000000000ff`);
    assert.equal(gone.status, 400, gone.text);
    assert.match(gone.body.error.message, /\?after=.*00000000000000ff/);
  });

  test("one op by the URL its 202's Location named; another server's op is 404 op_not_found", async () => {
    const { id, location } = started[2]!;
    assert.equal(location, `${OPS}/${id}`);
    const r = await s.call('GET', location);
    assert.equal(r.status, 200, r.text);
    assert.deepEqual([r.body.op.id, r.body.op.op, r.body.op.state, r.body.op.path], [id, 'unzip', 'succeeded', 'pack-2.zip']);
    const listed = (await s.call('GET', `${OPS}?limit=100`)).body.ops.find((o: { id: string }) => o.id === id);
    assert.deepEqual(r.body.op, listed, 'as the listing shows it');
    const other = await s.call('GET', `/api/v1/servers/creative/files/ops/${id}`);
    assert.equal(other.status, 404, other.text);
    assert.equal(other.body.error.code, 'op_not_found');
    const none = await s.call('GET', `${OPS}/00000000000000ff`);
    assert.equal(none.status, 404, none.text);
    assert.equal(none.body.error.code, 'op_not_found');
    const bad = await s.call('GET', `${OPS}/a.b,c`);
    assert.equal(bad.status, 400, bad.text);
    assert.equal(bad.body.error.code, 'bad_request');
  });

  test("an upload session's op id is its session id, and its done the bytes received after a part", async () => {
    s.program = undefined;
    const size = 3_000_000;
    const begun = await s.call('POST', `/api/v1/servers/survival/files/uploads?path=${q('plugins/followed.bin')}`, { size });
    assert.equal(begun.status, 201, begun.text);
    const id = begun.body.id as string;
    const part = Buffer.alloc(1_000_000, 7);
    const put = await fetch(`${s.url}/api/v1/servers/survival/files/uploads/${id}?offset=0`, {
      method: 'PUT',
      body: part,
      headers: { authorization: `Bearer ${TOKEN}`, 'content-length': String(part.length), 'content-digest': `sha-256=:${createHash('sha256').update(part).digest('base64')}:` },
    });
    assert.equal(put.status, 200, await put.text());
    // The receiver printed the count before it answered; the log reaches the listing within moments.
    const end = Date.now() + tierMs(5_000);
    let op: { id: string; op: string; state: string; done: number; total: number; path: string } | undefined;
    for (;;) {
      const r = await s.call('GET', `${OPS}/${id}`);
      assert.equal(r.status, 200, r.text);
      op = r.body.op;
      if (op!.done === part.length || Date.now() > end) break;
      await new Promise((res) => setTimeout(res, 50));
    }
    assert.deepEqual({ ...op, started_at: undefined }, { id, op: 'upload', path: 'plugins/followed.bin', state: 'running', started_at: undefined, done: part.length, total: size });
    assert.deepEqual(
      (await s.call('GET', OPS)).body.ops.filter((o: { op: string }) => o.op === 'upload').map((o: { id: string }) => o.id),
      [id],
      'listed once, by the session id',
    );
    const cancelled = await s.call('DELETE', `/api/v1/servers/survival/files/uploads/${id}`);
    assert.equal(cancelled.status, 204, cancelled.text);
  });
});
