/**
 * Tail and decompress end to end, on the embedded cluster (`npm test`) and the real control plane
 * (`npm run test:cluster`): the last lines of a fresh log (and again after lines are appended), of
 * a log while the server runs; a `.log.gz` the test writes read decompressed, a file that is not
 * gzip refused; hostile paths (`../`, the withheld file, a link leading out) refused as every
 * route refuses them.
 */

import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { RUNNING, setServer } from '../../test/support/servers.ts';
import { q, type Stack, startStack } from '../../test/support/stack.ts';

const S = '/api/v1/servers/survival';

describe('files/tail and decompressed reads', () => {
  let s: Stack;
  let outside: string;
  const lines = Array.from({ length: 500 }, (_, i) => `[12:00:${String(i % 60).padStart(2, '0')}] [Server thread/INFO]: line ${i} ✓`);
  before(async () => {
    s = await startStack();
    mkdirSync(join(s.world, 'logs'), { recursive: true });
    writeFileSync(join(s.world, 'logs', 'latest.log'), `${lines.join('\r\n')}\r\n`);
    writeFileSync(join(s.world, 'logs', '2026-12-06-1.log.gz'), gzipSync(`${lines.join('\n')}\n`));
    writeFileSync(join(s.world, 'logs', 'fake.log.gz'), 'plain text\n');
    outside = mkdtempSync(join(tmpdir(), 'felis-outside-'));
    writeFileSync(join(outside, 'secret.log'), 'outside\n');
    symlinkSync(join(outside, 'secret.log'), join(s.world, 'logs', 'escape.log'));
  });
  after(async () => {
    await s?.close();
    if (outside) rmSync(outside, { recursive: true, force: true });
  });

  test('the last lines of a fresh log, then of the same log with lines appended', async () => {
    const r = await s.call('GET', `${S}/files/tail?path=${q('logs/latest.log')}&lines=3`);
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body.lines, lines.slice(-3), 'CRLF ends are dropped, UTF-8 decoded');
    assert.equal(r.body.truncated, false);
    assert.equal(r.body.world_state, 'stopped');
    const size = r.body.size;
    appendFileSync(join(s.world, 'logs', 'latest.log'), 'appended one\nappended two\n');
    const again = await s.call('GET', `${S}/files/tail?path=${q('logs/latest.log')}&lines=3`);
    assert.deepEqual(again.body.lines, [lines.at(-1), 'appended one', 'appended two']);
    assert.equal(again.body.size, size + 26);
    const all = await s.call('GET', `${S}/files/tail?path=${q('logs/latest.log')}`);
    assert.equal(all.body.lines.length, 100, 'the default');
  });

  test('a .log.gz read with decompress=true is its text; a file that is not gzip is 400 gzip_invalid', async () => {
    const r = await s.call('GET', `${S}/file?path=${q('logs/2026-12-06-1.log.gz')}&decompress=true`);
    assert.equal(r.status, 200, r.text);
    assert.equal(Buffer.from(r.body.content, 'base64').toString(), `${lines.join('\n')}\n`);
    assert.equal(r.body.truncated, false);
    assert.equal(r.body.sha256, r.body.content_sha256);
    const raw = await s.call('GET', `${S}/file?path=${q('logs/2026-12-06-1.log.gz')}`);
    assert.equal(raw.status, 200, raw.text);
    assert.equal(raw.body.truncated, undefined);
    assert.notEqual(raw.body.sha256, r.body.sha256);
    const fake = await s.call('GET', `${S}/file?path=${q('logs/fake.log.gz')}&decompress=true`);
    assert.equal(fake.status, 400, fake.text);
    assert.equal(fake.body.error.code, 'gzip_invalid');
    assert.match(fake.body.error.message, /logs\/fake\.log\.gz is not gzip-compressed/);
  });

  test('hostile paths: ../, the withheld file, a link leading out; a bad lines is 400 before any Job', async () => {
    for (const p of ['../etc/passwd', 'logs/../../x.log', 'config/paper-global.yml', 'logs/escape.log']) {
      const r = await s.call('GET', `${S}/files/tail?path=${q(p)}`);
      assert.equal(r.status, 400, `${p}: ${r.text}`);
      assert.equal(r.body.error.code, 'bad_path', p);
      assert.doesNotMatch(r.text, /outside\n|XYZZY/, p); // nothing of what the file holds
      const d = await s.call('GET', `${S}/file?path=${q(p)}&decompress=true`);
      assert.equal(d.status, 400, `${p}: ${d.text}`);
    }
    const missing = await s.call('GET', `${S}/files/tail?path=${q('logs/nope.log')}`);
    assert.equal(missing.status, 404, missing.text);
    const bad = await s.call('GET', `${S}/files/tail?path=${q('logs/latest.log')}&lines=5001`);
    assert.equal(bad.status, 400, bad.text);
  });

  // Last: the server stays running after it.
  test('while the server runs: the log is tailed by a read-only Job beside the game, world_state running', async () => {
    await setServer(s.cluster, 'survival', RUNNING);
    const custom = s.cluster.kubeConfig(s.cluster.adminToken).makeApiClient(CustomObjectsApi);
    await custom.patchNamespacedCustomObjectStatus(
      { group: 'felis.lolicon.best', version: 'v1alpha1', namespace: 'minecraft', plural: 'minecraftservers', name: 'survival', body: { status: { nodeName: 'local' } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    appendFileSync(join(s.world, 'logs', 'latest.log'), '[12:01:00] [Server thread/INFO]: while running\n');
    const r = await s.call('GET', `${S}/files/tail?path=${q('logs/latest.log')}&lines=1`);
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body.lines, ['[12:01:00] [Server thread/INFO]: while running']);
    assert.equal(r.body.world_state, 'running');
    const d = await s.call('GET', `${S}/file?path=${q('logs/2026-12-06-1.log.gz')}&decompress=true`);
    assert.equal(d.status, 200, d.text);
  });
});
