/**
 * The withheld file (the proxy forwarding secret) stays opaque through every route: no answer
 * carries its content, hash or size, and no answer tells whether a guess of its content is right.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startStack, q, type Stack } from './support/stack.ts';

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
