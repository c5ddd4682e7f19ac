/**
 * Guarded files stay guarded through the routes, on both tiers: the documented edit flow of
 * server.properties keeps its RCON password (a write and a single upload of the text a read shows),
 * a placeholder with no value on disk is refused, and what the trash keeps of server.properties or of
 * the withheld file never comes back readable under another folder, listed without its bytes.
 */

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { q, type Stack, startStack, TOKEN } from './support/stack.ts';

const S = '/api/v1/servers/survival';
const sha = (b: string | Buffer) => createHash('sha256').update(b).digest('hex');
const body = (text: string, extra: object = {}) => ({ content: Buffer.from(text).toString('base64'), content_sha256: sha(text), ...extra });
const PASSWORD = /^rcon\.password=hunter2-change-me$/m;

describe('guarded files through the routes', () => {
  let s: Stack;
  before(async () => {
    s = await startStack({ browse: {}, uploads: { idleSeconds: 20, lifetimeSeconds: 600 } });
  });
  after(async () => {
    await s?.close();
  });

  const props = () => readFileSync(join(s.world, 'server.properties'), 'utf8');

  /** The text a panel shows: a read of server.properties, decoded. */
  async function shown(): Promise<{ text: string; sha256: string }> {
    const r = await s.call('GET', `${S}/file?path=server.properties`);
    assert.equal(r.status, 200, r.text);
    const text = Buffer.from(r.body.content, 'base64').toString();
    assert.match(text, /^rcon\.password=<redacted by felis>$/m);
    assert.doesNotMatch(r.text, /hunter2/);
    return { text, sha256: r.body.sha256 };
  }

  test('read, change one line, write back with expect_sha256: the password on disk is unchanged', async () => {
    const { text, sha256 } = await shown();
    const w = await s.call('PUT', `${S}/file?path=server.properties`, body(text.replace('max-players=20', 'max-players=50'), { expect_sha256: sha256 }));
    assert.equal(w.status, 200, w.text);
    const disk = props();
    assert.match(disk, PASSWORD);
    assert.match(disk, /^max-players=50$/m);
    assert.equal(w.body.sha256, sha(disk), 'the answer hashes what was written');
  });

  test('a single upload of the shown text keeps the password too', async () => {
    const { text } = await shown();
    const data = Buffer.from(text.replace('view-distance=10', 'view-distance=12'));
    const res = await fetch(`${s.url}${S}/files/upload?path=server.properties&overwrite=true`, {
      method: 'PUT',
      body: data,
      headers: { authorization: `Bearer ${TOKEN}`, 'content-digest': `sha-256=:${createHash('sha256').update(data).digest('base64')}:` },
    });
    const answer = await res.text();
    assert.equal(res.status, 200, answer);
    assert.match(props(), PASSWORD);
    assert.match(props(), /^view-distance=12$/m);
  });

  test('a placeholder for a key the file does not have is 409 redacted_value_unknown, nothing written', async () => {
    const before = props();
    const w = await s.call('PUT', `${S}/file?path=server.properties`, body('motd=x\nforwarding-secrets=<redacted by felis>\n'));
    assert.equal(w.status, 409, w.text);
    assert.equal(w.body.error.code, 'redacted_value_unknown');
    assert.match(w.body.error.message, /forwarding-secrets/);
    assert.equal(props(), before);
  });

  test('an overwritten server.properties in the trash: listed with no bytes, never restored under `to`', async () => {
    const w = await s.call('PUT', `${S}/file?path=server.properties`, body('motd=replaced\n'));
    assert.equal(w.status, 200, w.text);
    const list = await s.call('GET', `${S}/files/trash`);
    assert.equal(list.status, 200, list.text);
    const item = list.body.items.find((i: { paths: string[] }) => i.paths[0] === 'server.properties');
    assert.ok(item, list.text);
    assert.equal(item.bytes, 0);
    const r = await s.call('POST', `${S}/files/trash/${item.id}/restore`, { to: 'notes' });
    assert.equal(r.status, 400, r.text);
    assert.equal(r.body.error.code, 'bad_path');
    assert.equal(existsSync(join(s.world, 'notes/server.properties')), false);
  });

  test('the withheld file overwritten 66 times: its oldest content never comes back readable', async () => {
    const SECRET = 'config/paper-global.yml';
    const original = readFileSync(join(s.world, SECRET), 'utf8');
    for (let i = 0; i < 66; i++) {
      const w = await s.call('PUT', `${S}/file?path=${q(SECRET)}`, body(`proxies:\n  velocity:\n    secret: rotated-${i}\n`));
      assert.equal(w.status, 200, w.text);
    }
    const list = await s.call('GET', `${S}/files/trash?limit=5000`);
    const records = list.body.items.filter((i: { paths: string[] }) => i.paths[0] === SECRET);
    assert.ok(records.length >= 66, `${records.length} records`);
    const oldest = records[records.length - 1];
    assert.equal(oldest.bytes, 0);
    const r = await s.call('POST', `${S}/files/trash/${oldest.id}/restore`, { to: 'restored' });
    assert.equal(r.status, 400, r.text);
    assert.equal(existsSync(join(s.world, 'restored')), false);
    // Where it was, it is the withheld file again.
    assert.equal((await s.call('DELETE', `${S}/file?path=${q(SECRET)}`)).status, 200);
    const back = await s.call('POST', `${S}/files/trash/${oldest.id}/restore`, {});
    assert.equal(back.status, 200, back.text);
    assert.equal(readFileSync(join(s.world, SECRET), 'utf8'), original);
    const read = await s.call('GET', `${S}/file?path=${q(SECRET)}`);
    assert.equal(read.status, 400, read.text);
    assert.ok(!read.text.includes('not-for-your-eyes') && !read.text.includes(Buffer.from(original).toString('base64')));
  });
});

describe('the edit flow without a job key (the content rides in the Job env)', () => {
  let s: Stack;
  before(async () => {
    s = await startStack();
  });
  after(async () => {
    await s?.close();
  });

  test('read, change one line, write back: the password on disk is unchanged', async () => {
    const r = await s.call('GET', `${S}/file?path=server.properties`);
    assert.equal(r.status, 200, r.text);
    const text = Buffer.from(r.body.content, 'base64').toString().replace('enable-rcon=true', 'enable-rcon=false');
    const w = await s.call('PUT', `${S}/file?path=server.properties`, body(text, { expect_sha256: r.body.sha256 }));
    assert.equal(w.status, 200, w.text);
    const disk = readFileSync(join(s.world, 'server.properties'), 'utf8');
    assert.match(disk, PASSWORD);
    assert.match(disk, /^enable-rcon=false$/m);
  });
});
