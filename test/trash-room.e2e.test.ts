/**
 * A request that can never fit costs the undo trash nothing, end to end on both tiers: with a
 * record in the trash, an upload session begun for a size past the free space and all the trash
 * holds is 507 `upload_staging_full`, and a pull from a loopback origin claiming a Content-Length
 * past the operator's limit (`too_large`) or past the volume (`volume_full`) fails; the record is
 * still listed after each (docs/undo.md, "Time and space").
 */

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ended, waitOp } from './support/ops.ts';
import { q, type Stack, startStack, TIER, tierMs, until } from './support/stack.ts';

const S = '/api/v1/servers/survival';
/** The operator's pull limit here: 1 PiB, so a claim under it is judged by the space alone. */
const PULL_MAX = 2 ** 50;

/** A loopback origin answering `/claim?length=<n>` with that Content-Length and one byte, then silence. */
async function claiming() {
  const server = http.createServer((req, res) => {
    const length = new URL(req.url ?? '/', 'http://x').searchParams.get('length') ?? '0';
    res.writeHead(200, { 'content-length': length });
    res.write('x');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => (server.closeAllConnections(), server.close()) };
}

describe(`a request that cannot fit leaves the trash alone through the ${TIER} cluster`, () => {
  let s: Stack;
  let o: Awaited<ReturnType<typeof claiming>>;
  before(async () => {
    o = await claiming();
    // browse: the shared job key, which upload sessions need.
    s = await startStack({
      browse: {},
      editor: { pullEnv: { FELIS_PULL_ALLOW: '127.0.0.1', FELIS_PULL_MAX_BYTES: String(PULL_MAX), FELIS_PULL_IDLE_TIMEOUT_SECONDS: '30' } },
      uploads: { idleSeconds: 20, lifetimeSeconds: 600 },
    });
  });
  after(async () => {
    await s?.close();
    o?.close();
  });

  const listed = async () => {
    const r = await s.call('GET', `${S}/files/trash`);
    assert.equal(r.status, 200, r.text);
    return (r.body.items as Array<{ id: string }>).map((i) => i.id);
  };

  /**
   * A file of the world deleted through the route, once the world is free (an earlier test's Job may
   * still hold it): its trash record's id, listed.
   */
  const trashed = async (name: string) => {
    writeFileSync(join(s.world, 'plugins', name), Buffer.alloc(100_000, 1));
    const del = await until(
      async () => {
        const r = await s.call('DELETE', `${S}/file?path=${q(`plugins/${name}`)}`);
        return r.status === 409 || r.status === 429 ? undefined : r;
      },
      'the delete to run',
      tierMs(30_000, 90_000),
    );
    assert.equal(del.status, 200, del.text);
    assert.ok((await listed()).includes(del.body.trash_id));
    return del.body.trash_id as string;
  };

  test('an upload session begun with size 1e15 is 507 upload_staging_full, and the record is still listed', async () => {
    const record = await trashed('a.jar');
    const r = await s.call('POST', `${S}/files/uploads?path=${q('plugins/huge.bin')}`, { size: 1e15 });
    assert.equal(r.status, 507, r.text);
    assert.equal(r.body.error.code, 'upload_staging_full');
    assert.ok((await listed()).includes(record), 'the record is still listed');
  });

  /** Runs a pull of the origin's claim to its end, once the world is free. */
  const pull = (length: number, name: string) =>
    until(
      async () => {
        const r = await s.call('POST', `${S}/files/pull`, { url: `${o.base}/claim?length=${length}`, path: 'plugins', name });
        if (r.status === 409 || r.status === 429) return undefined;
        assert.equal(r.status, 202, r.text);
        return waitOp(s, r.body.op.id, ended);
      },
      'the pull to start',
      tierMs(30_000, 90_000),
    );

  test("a pull claiming more than the operator's limit is too_large, and the record is still listed", async () => {
    const record = await trashed('b.jar');
    const op = await pull(2 * PULL_MAX, 'over-limit.bin');
    assert.equal(op.state, 'failed', JSON.stringify(op));
    assert.equal(op.error?.code, 'too_large');
    assert.ok((await listed()).includes(record), 'the record is still listed');
  });

  test('a pull claiming more than the volume and the trash could ever give is volume_full, and the record is still listed', async () => {
    const record = await trashed('c.jar');
    const op = await pull(PULL_MAX / 2, 'over-volume.bin');
    assert.equal(op.state, 'failed', JSON.stringify(op));
    assert.equal(op.error?.code, 'volume_full');
    assert.ok((await listed()).includes(record), 'the record is still listed');
  });
});
