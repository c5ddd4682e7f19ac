/**
 * A pull holds the world only while its file is placed, on both tiers: while a slow pull downloads
 * (the loopback origin trickles its body and holds the end back until the test lets it go), the
 * world is not held, a write answers 200 at once, and the pull then ends `succeeded` with its file
 * in place, placed by the settle pass its Job's end started; a start meanwhile is not refused
 * because of it, and its download is then not placed (`not_stopped`). Loopback is reached only
 * through the test-only rule FELIS_PULL_ALLOW=127.0.0.1, as in files-pull.e2e.test.ts.
 */

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ended, waitOp } from './support/ops.ts';
import { STOPPED, setServer } from './support/servers.ts';
import { q, type Stack, startStack, tierMs } from './support/stack.ts';

const S = '/api/v1/servers/survival';
const SIZE = 256 << 10;
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const body = Buffer.alloc(SIZE, 'pull');

/** A loopback origin whose `/trickle/<name>` sends 1 KiB every 20 ms, and the rest once let go. */
async function origin() {
  const held = new Map<string, () => void>();
  const server = http.createServer((req, res) => {
    const name = (req.url ?? '').split('?')[0]!.replace(/^\/trickle\//, '');
    res.writeHead(200, { 'content-length': SIZE });
    let sent = 0;
    const t = setInterval(() => {
      if (sent < SIZE / 2) {
        res.write(body.subarray(sent, sent + 1024));
        sent += 1024;
      }
    }, 20);
    held.set(name, () => {
      clearInterval(t);
      res.end(body.subarray(sent));
    });
    res.on('close', () => clearInterval(t));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: (name: string) => `http://127.0.0.1:${(server.address() as AddressInfo).port}/trickle/${name}`,
    release: (name: string) => held.get(name)?.(),
    close: () => (server.closeAllConnections(), server.close()),
  };
}

/** Pull stagings left at the world's root (the withheld ledger is not one). */
const stagings = (world: string) => readdirSync(world).filter((n) => /^\.felis-edit-[0-9a-f]{12}$/.test(n));

describe('a pull holds the world only while its file is placed', () => {
  let s: Stack;
  let o: Awaited<ReturnType<typeof origin>>;
  before(async () => {
    o = await origin();
    s = await startStack({ editor: { pullEnv: { FELIS_PULL_ALLOW: '127.0.0.1' } }, browse: {} });
  });
  after(async () => {
    await s?.close();
    o?.close();
  });

  /** Starts a pull of `name` into plugins/ and waits until its first bytes arrived. */
  async function downloading(name: string): Promise<string> {
    const r = await s.call('POST', `${S}/files/pull`, { url: o.url(name), path: 'plugins' });
    assert.equal(r.status, 202, r.text);
    const op = await waitOp(s, r.body.op.id, (x) => x.done > 0 || ended(x));
    assert.equal(op.state, 'running', JSON.stringify(op));
    return r.body.op.id;
  }

  test('while a slow pull downloads, the world is free and a write answers 200 at once; the pull then ends succeeded with its file in place', { timeout: tierMs(60_000, 180_000) }, async () => {
    const id = await downloading('mod.jar');
    const holder = await s.call('GET', `${S}/holder`);
    assert.equal(holder.body.held, false, holder.text);
    const text = Buffer.from('written beside a pull\n');
    const t0 = Date.now();
    const w = await s.call('PUT', `${S}/file?path=${q('beside.txt')}`, { content: text.toString('base64'), content_sha256: sha(text) });
    assert.equal(w.status, 200, w.text);
    assert.ok(Date.now() - t0 < tierMs(10_000), 'answered in the time of a write, not a download');
    // Answered while the origin still holds back the end: not after the pull.
    assert.equal((await waitOp(s, id, () => true)).state, 'running');
    assert.equal(readFileSync(join(s.world, 'beside.txt'), 'utf8'), 'written beside a pull\n');
    o.release('mod.jar');
    const op = await waitOp(s, id, ended);
    assert.deepEqual([op.state, op.op, op.to, op.bytes, op.files], ['succeeded', 'pull', 'plugins/mod.jar', SIZE, 1], JSON.stringify(op));
    assert.equal(sha(readFileSync(join(s.world, 'plugins', 'mod.jar'))), sha(body));
    assert.deepEqual(stagings(s.world), []);
  });

  test('a start while a pull downloads is not refused because of it; the download is then not placed (not_stopped)', { timeout: tierMs(60_000, 180_000) }, async () => {
    const id = await downloading('late.jar');
    try {
      const st = await s.call('POST', `${S}/start`);
      assert.equal(st.status, 202, st.text);
      assert.equal(st.body.desiredState, 'Running');
      o.release('late.jar');
      const op = await waitOp(s, id, ended);
      assert.deepEqual([op.state, op.error?.code], ['failed', 'not_stopped'], JSON.stringify(op));
      assert.match(op.error!.message, /started before the pulled file could be placed/);
      assert.equal(existsSync(join(s.world, 'plugins', 'late.jar')), false);
    } finally {
      await setServer(s.cluster, 'survival', STOPPED);
    }
  });
});
