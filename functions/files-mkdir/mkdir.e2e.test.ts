/**
 * mkdir end to end, on the embedded cluster (`npm test`) and the real control plane
 * (`npm run test:cluster`): one level by default, whose missing parent is a 404 naming that folder;
 * `parents=true` makes every missing folder top down, as the Job's own mkdir does, and answers a
 * folder already there as made (mkdir -p), but never a file; only the exact value `true` counts.
 */

import assert from 'node:assert/strict';
import { existsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { q, type Stack, startStack } from '../../test/support/stack.ts';

const S = '/api/v1/servers/survival';

describe('files/mkdir', () => {
  let s: Stack;
  before(async () => {
    s = await startStack();
  });
  after(async () => {
    await s?.close();
  });

  test('without parents a missing parent is 404 naming the folder, and nothing is made', async () => {
    const r = await s.call('POST', `${S}/files/mkdir?path=${q('a/b/c')}`);
    assert.equal(r.status, 404, r.text);
    assert.equal(r.body.error.code, 'not_found');
    assert.match(r.body.error.message, /folder a\/b does not exist/);
    assert.equal(existsSync(join(s.world, 'a')), false);
    // Anything but the exact value true is no parents.
    const yes = await s.call('POST', `${S}/files/mkdir?path=${q('a/b/c')}&parents=yes`);
    assert.equal(yes.status, 404, yes.text);
    assert.equal(existsSync(join(s.world, 'a')), false);
  });

  test('parents=true makes a, a/b and a/b/c; again it is 200 (mkdir -p), without parents 409 as before', async () => {
    const r = await s.call('POST', `${S}/files/mkdir?path=${q('a/b/c')}&parents=true`);
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body, { path: 'a/b/c', status: 'created' });
    for (const p of ['a', 'a/b', 'a/b/c']) assert.ok(statSync(join(s.world, p)).isDirectory(), p);
    const again = await s.call('POST', `${S}/files/mkdir?path=${q('a/b/c')}&parents=true`);
    assert.equal(again.status, 200, again.text);
    const plain = await s.call('POST', `${S}/files/mkdir?path=${q('a/b/c')}`);
    assert.equal(plain.status, 409, plain.text);
    assert.equal(plain.body.error.code, 'file_exists');
  });

  test('parents=true does not take a file for a folder', async () => {
    writeFileSync(join(s.world, 'a', 'note.txt'), 'x');
    const onFile = await s.call('POST', `${S}/files/mkdir?path=${q('a/note.txt')}&parents=true`);
    assert.equal(onFile.status, 409, onFile.text);
    const under = await s.call('POST', `${S}/files/mkdir?path=${q('a/note.txt/d/e')}&parents=true`);
    assert.equal(under.status, 400, under.text);
    assert.equal(under.body.error.code, 'bad_path');
    assert.ok(statSync(join(s.world, 'a', 'note.txt')).isFile());
  });
});
