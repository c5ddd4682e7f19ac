/**
 * The name rule end to end, with the real Job program (dist/felis.mjs) on both tiers: a zip whose
 * entry has a 300-byte name, uploaded through the files routes and extracted, fails
 * `archive_unsafe` naming the entry, with nothing placed; a pull whose loopback server names the
 * file with a bidirectional control in its Content-Disposition fails `bad_name`, with nothing placed
 * (not even under the URL's name). Loopback is reached only through FELIS_PULL_ALLOW=127.0.0.1.
 */

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { lstatSync, readdirSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, relative } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { forgeZip } from '../job/archive/forge.test-kit.ts';
import { LEDGER_DIR } from '../lib/protocol/working-names.ts';
import { ended, waitOp } from './support/ops.ts';
import { q, type Stack, startStack, TOKEN } from './support/stack.ts';

/**
 * Every path under `dir` with its type and size, sorted: what "nothing placed" is checked against.
 * The withheld file's ledger is the editor's (every read-write Job keeps it), not the world's.
 */
function listing(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      if (name === LEDGER_DIR) continue;
      const p = join(d, name);
      const st = lstatSync(p);
      out.push(`${relative(dir, p)} ${st.isDirectory() ? 'dir' : st.size}`);
      if (st.isDirectory()) walk(p);
    }
  };
  walk(dir);
  return out;
}

/** `photo<U+202E>gpj.jar` as a server's raw bytes: Node writes a header's characters as latin1. */
const RLO_NAME = 'photo\u202egpj.jar';
const rawHeader = (text: string) => Buffer.from(text, 'utf8').toString('latin1');

describe('names a filesystem cannot hold, or that deceive, are refused before anything is placed', () => {
  let s: Stack;
  let origin: http.Server;
  let base: string;
  before(async () => {
    origin = http.createServer((req, res) => {
      // A Buffer body: with a string one Node may send the head in the body's encoding (UTF-8), not latin1.
      if ((req.url ?? '').startsWith('/innocent.jar'))
        return void res.writeHead(200, { 'content-disposition': `attachment; filename="${rawHeader(RLO_NAME)}"`, 'content-length': 4 }).end(Buffer.from('evil'));
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => origin.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`;
    // browse: the shared job key uploads need.
    s = await startStack({ editor: { pullEnv: { FELIS_PULL_ALLOW: '127.0.0.1' } }, browse: {}, uploads: { idleSeconds: 20, lifetimeSeconds: 600 } });
  });
  after(async () => {
    await s?.close();
    origin?.closeAllConnections();
    origin?.close();
  });

  test('a zip uploaded through the files routes whose entry has a 300-byte name: unzip fails archive_unsafe naming it; nothing placed', async () => {
    const long = `mods/${'n'.repeat(300)}.jar`;
    const zip = forgeZip([
      { name: 'mods/fine.jar', data: 'fine' },
      { name: long, data: 'x' },
    ]);
    const digest = createHash('sha256').update(zip).digest('base64');
    const up = await fetch(`${s.url}/api/v1/servers/survival/files/upload?path=${q('plugins/long.zip')}`, {
      method: 'PUT',
      body: zip,
      headers: { authorization: `Bearer ${TOKEN}`, 'content-digest': `sha-256=:${digest}:` },
    });
    assert.equal(up.status, 200, await up.text());
    const before = listing(s.world);
    const u = await s.call('POST', `/api/v1/servers/survival/files/unzip?path=${q('plugins/long.zip')}`, {});
    assert.equal(u.status, 202, u.text);
    const op = await waitOp(s, u.body.op.id, ended);
    assert.equal(op.state, 'failed', JSON.stringify(op));
    assert.equal(op.error?.code, 'archive_unsafe', JSON.stringify(op));
    assert.equal(op.error?.entry, long);
    assert.match(op.error!.message, /has a name of 304 bytes; a file or folder name has at most 255/);
    assert.deepEqual(listing(s.world), before, 'nothing placed, no working folder left');
  });

  test('a pull whose server names the file with a bidirectional control: the op fails bad_name; nothing placed, not even under the URL name', async () => {
    const before = listing(s.world);
    const r = await s.call('POST', '/api/v1/servers/survival/files/pull', { url: `${base}/innocent.jar`, path: 'plugins' });
    assert.equal(r.status, 202, r.text);
    const op = await waitOp(s, r.body.op.id, ended);
    assert.equal(op.state, 'failed', JSON.stringify(op));
    assert.equal(op.error?.code, 'bad_name', JSON.stringify(op));
    assert.match(op.error!.message, /"photo<U\+202E>gpj\.jar" holds a bidirectional control character \(U\+202E\)/);
    assert.deepEqual(listing(s.world), before, 'nothing placed, no working file left');
  });

  test('the same name given by the caller is 400 bad_name before any Job', async () => {
    const r = await s.call('POST', '/api/v1/servers/survival/files/pull', { url: `${base}/innocent.jar`, path: 'plugins', name: RLO_NAME });
    assert.equal(r.status, 400, r.text);
    assert.equal(r.body.error.code, 'bad_name');
  });
});
