/**
 * The withheld file (the proxy forwarding secret) stays opaque through every route: no answer
 * carries its content, hash or size, and no answer tells whether a guess of its content is right.
 */

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { FUNCTION_USER, q, type Stack, startStack, tierMs } from './support/stack.ts';

const sha = (b: string | Buffer) => createHash('sha256').update(b).digest('hex');
const SECRET = 'config/paper-global.yml';

describe('the withheld file stays opaque', () => {
  let s: Stack;
  let secret: Buffer;
  before(async () => {
    s = await startStack();
    secret = readFileSync(join(s.world, SECRET));
  });
  after(async () => {
    await s?.close();
  });

  /** Nothing of the secret in an answer: its bytes, its base64, its hash, its size as a number. */
  const assertOpaque = (text: string) => {
    assert.doesNotMatch(text, /not-for-your-eyes/);
    assert.ok(!text.includes(secret.toString('base64')));
    assert.ok(!text.includes(sha(secret)));
    assert.doesNotMatch(text, new RegExp(`\\b${secret.length}\\b`));
  };

  test('listings show it with size 0; a read is bad_path', async () => {
    const l = await s.call('GET', `/api/v1/servers/survival/files?path=config`);
    assert.equal(l.status, 200, l.text);
    const e = l.body.entries.find((x: { name: string }) => x.name === 'paper-global.yml');
    assert.equal(e.size, 0);
    assertOpaque(l.text);
    const r = await s.call('GET', `/api/v1/servers/survival/file?path=${q(SECRET)}`);
    assert.equal(r.status, 400, r.text);
    assert.equal(r.body.error.code, 'bad_path');
    assertOpaque(r.text);
  });

  test('a conditional write answers bad_path alike for the right and a wrong guess, and leaves the file as it was', async () => {
    const body = (extra: object) => ({ content: Buffer.from('stolen\n').toString('base64'), content_sha256: sha('stolen\n'), ...extra });
    const right = await s.call('PUT', `/api/v1/servers/survival/file?path=${q(SECRET)}`, body({ expect_sha256: sha(secret) }));
    const wrong = await s.call('PUT', `/api/v1/servers/survival/file?path=${q(SECRET)}`, body({ expect_sha256: sha('a guess') }));
    const create = await s.call('PUT', `/api/v1/servers/survival/file?path=${q('./' + SECRET)}`, body({ create_only: true }));
    for (const r of [right, wrong, create]) {
      assert.equal(r.status, 400, r.text);
      assert.equal(r.body.error.code, 'bad_path');
      assertOpaque(r.text);
    }
    assert.equal(right.body.error.message, wrong.body.error.message);
    assert.deepEqual(readFileSync(join(s.world, SECRET)), secret);
  });

  test('rename and an unconditional write answer nothing about the old content', async () => {
    const mv = await s.call('POST', `/api/v1/servers/survival/files/rename?path=${q(SECRET)}`, { to: 'config/elsewhere.yml' });
    assert.equal(mv.status, 400, mv.text);
    assertOpaque(mv.text);
    const text = 'proxies:\n  velocity:\n    secret: "rotated"\n';
    const w = await s.call('PUT', `/api/v1/servers/survival/file?path=${q(SECRET)}`, { content: Buffer.from(text).toString('base64'), content_sha256: sha(text) });
    assert.equal(w.status, 200, w.text);
    assert.equal(w.body.sha256, sha(text));
    assertOpaque(w.text);
    assert.equal(readFileSync(join(s.world, SECRET), 'utf8'), text);
  });
});

/**
 * The secret's content stays withheld whatever happens to its inode: a hard link planted beside it
 * (as a plugin can), then an API delete or replace of the original (refused while the link exists:
 * 409 withheld_linked), or the game's own save (a temp file renamed over it). Read, the browse
 * Pod's read, a listing, a file and a folder download and the zip op all leave it out.
 */
describe('hard links to the withheld file', () => {
  let s: Stack;
  let secret: Buffer;
  before(async () => {
    s = await startStack({ browse: { idleSeconds: 30 }, downloads: {} });
    secret = readFileSync(join(s.world, SECRET));
  });
  after(async () => {
    await s?.close();
  });

  const marker = () => secret.toString('utf8').match(/secret:\s*"?([^"\n]+)/)?.[1] ?? secret.toString('utf8').trim();
  const leaks = (b: Buffer | string) => Buffer.from(b).includes(Buffer.from(marker())) || Buffer.from(b).includes(secret);

  /** Every way to get the bytes of `name` (and its folder, zipped): none may carry the secret. */
  const assertWithheld = async (name: string) => {
    // Read, repeated until one is answered by the browse Pod (no Job created for it).
    const creates = () => s.cluster.counts(FUNCTION_USER)['create jobs'] ?? 0;
    let byPod = false;
    for (let i = 0; i < 30 && !byPod; i++) {
      const before = creates();
      const r = await s.call('GET', `/api/v1/servers/survival/file?path=${q(name)}`);
      assert.equal(r.status, 400, `read ${i}: ${r.text}`);
      assert.equal(r.body.error.code, 'bad_path');
      assert.ok(!leaks(r.text));
      byPod = i > 0 && creates() === before;
      if (!byPod) await new Promise((res) => setTimeout(res, 200));
    }
    assert.ok(byPod, 'a read answered by the browse Pod');
    const folder = name.includes('/') ? name.slice(0, name.lastIndexOf('/')) : '';
    const l = await s.call('GET', `/api/v1/servers/survival/files?path=${q(folder)}`);
    assert.equal(l.status, 200, l.text);
    assert.equal(l.body.entries.find((e: { name: string }) => e.name === name.slice(folder ? folder.length + 1 : 0)).size, 0);
    const file = await s.call('POST', `/api/v1/servers/survival/files/download?path=${q(name)}`);
    assert.equal(file.status, 200, file.text);
    const got = await fetch(new URL(file.body.url, s.url));
    const body = Buffer.from(await got.arrayBuffer());
    assert.equal(got.status, 400, body.toString());
    assert.ok(!leaks(body));
    if (folder) {
      const dir = await s.call('POST', `/api/v1/servers/survival/files/download?path=${q(folder)}&dir=true`);
      assert.equal(dir.status, 200, dir.text);
      const zip = await fetch(new URL(dir.body.url, s.url));
      assert.equal(zip.status, 200);
      assert.ok(!leaks(Buffer.from(await zip.arrayBuffer())), 'the folder download packs the secret');
      // The export Jobs of the downloads hold the world until they end: retry while they do.
      const end = Date.now() + tierMs(30_000);
      let z = await s.call('POST', `/api/v1/servers/survival/files/zip?path=${q(folder)}`, { name: 'leak.zip' });
      while (z.status === 409 && z.body.error.code === 'maintenance_in_progress' && Date.now() < end) {
        await new Promise((res) => setTimeout(res, 200));
        z = await s.call('POST', `/api/v1/servers/survival/files/zip?path=${q(folder)}`, { name: 'leak.zip' });
      }
      assert.equal(z.status, 202, z.text);
      for (;;) {
        const ops = await s.call('GET', '/api/v1/servers/survival/files/ops');
        const op = (ops.body.ops as { id: string; state: string }[]).find((o) => o.id === z.body.op.id);
        if (op && op.state !== 'running') {
          assert.equal(op.state, 'succeeded', JSON.stringify(op));
          break;
        }
        assert.ok(Date.now() < end, 'the zip op to end');
        await new Promise((res) => setTimeout(res, 100));
      }
      assert.ok(!leaks(readFileSync(join(s.world, 'leak.zip'))), 'the zip op packs the secret');
      rmSync(join(s.world, 'leak.zip'));
    }
  };

  test('while a hard link exists, an API delete and replace of the file are 409 withheld_linked; the link is withheld everywhere; the link itself can go', async () => {
    mkdirSync(join(s.world, 'plugins'), { recursive: true });
    linkSync(join(s.world, SECRET), join(s.world, 'plugins/stolen.yml'));
    const del = await s.call('DELETE', `/api/v1/servers/survival/file?path=${q(SECRET)}`);
    assert.equal(del.status, 409, del.text);
    assert.equal(del.body.error.code, 'withheld_linked');
    const text = 'proxies:\n  velocity:\n    secret: "rotated"\n';
    const put = await s.call('PUT', `/api/v1/servers/survival/file?path=${q(SECRET)}`, { content: Buffer.from(text).toString('base64'), content_sha256: sha(text) });
    assert.equal(put.status, 409, put.text);
    assert.equal(put.body.error.code, 'withheld_linked');
    assert.deepEqual(readFileSync(join(s.world, SECRET)), secret);
    await assertWithheld('plugins/stolen.yml');
    const gone = await s.call('DELETE', `/api/v1/servers/survival/file?path=${q('plugins/stolen.yml')}`);
    assert.equal(gone.status, 200, gone.text);
  });

  test('a hard link made before the game saves the file (temp + rename) stays withheld after the save rotates the content', async () => {
    // The file as the game keeps it (put back should an earlier step have lost it).
    if (!existsSync(join(s.world, SECRET))) writeFileSync(join(s.world, SECRET), secret);
    // Any read-write Job remembers the current content.
    const m = await s.call('POST', `/api/v1/servers/survival/files/mkdir?path=${q('mods')}`);
    assert.equal(m.status, 200, m.text);
    linkSync(join(s.world, SECRET), join(s.world, 'mods/old.yml'));
    writeFileSync(join(s.world, 'config/paper-global.yml.tmp'), 'proxies:\n  velocity:\n    secret: "after-save"\n');
    renameSync(join(s.world, 'config/paper-global.yml.tmp'), join(s.world, SECRET));
    await assertWithheld('mods/old.yml');
  });
});
