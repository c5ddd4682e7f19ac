/**
 * Search by content end to end (`files/search?content=`): server.properties is found by its
 * redacted text only (the rcon password finds nothing, the placeholder finds its line), the
 * withheld file and a copy of its content are never searched, binary files are skipped, a link
 * out of the world is never followed, `q` filters names, the answer from a warm browse Pod equals
 * the one-shot Job's, and a bad text or a hostile path is refused.
 */

import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { FUNCTION_USER, q, type Stack, startStack } from './support/stack.ts';
import { oneShotEditor, SURVIVAL, untilWarm } from './support/warm-cold.ts';

type Hit = { path: string; line: number; column: number; text: string };
const S = '/api/v1/servers/survival/files/search';
const where = (hits: Hit[]) => hits.map((h) => `${h.path}:${h.line}:${h.column}`).sort();

describe('search by content', () => {
  let s: Stack;
  let outside: string;
  before(async () => {
    s = await startStack({ browse: {} });
    mkdirSync(join(s.world, 'logs'), { recursive: true });
    writeFileSync(join(s.world, 'logs/latest.log'), '[12:00:00] Done (3.2s)!\n[12:01:00] Steve joined the game\r\n[12:02:00] steve: hello Wörld\n');
    writeFileSync(join(s.world, 'logs/old.txt'), 'Steve was here\n');
    writeFileSync(join(s.world, 'logs/crash.bin'), Buffer.concat([Buffer.from('Steve\n'), Buffer.alloc(16)]));
    // A copy of the withheld content under another name is withheld too.
    copyFileSync(join(s.world, 'config/paper-global.yml'), join(s.world, 'logs/pg-copy.yml'));
    outside = mkdtempSync(join(tmpdir(), 'felis-outside-'));
    writeFileSync(join(outside, 'steve.txt'), 'Steve outside the world\n');
    symlinkSync(outside, join(s.world, 'logs/escape'));
    symlinkSync(join(outside, 'steve.txt'), join(s.world, 'logs/steve-link.txt'));
  });
  after(async () => {
    await s?.close();
    if (outside) rmSync(outside, { recursive: true, force: true });
  });

  test('server.properties is found by its redacted text only: the rcon password finds nothing, the placeholder its line', async () => {
    const secret = await s.call('GET', `${S}?content=${q('hunter2-change-me')}`);
    assert.equal(secret.status, 200, secret.text);
    assert.deepEqual(secret.body.matches, []);
    // Not even part of it, nor the key with the value's first letter: the value is not there to find.
    assert.deepEqual((await s.call('GET', `${S}?content=hunter2`)).body.matches, []);
    assert.deepEqual((await s.call('GET', `${S}?content=${q('rcon.password=h')}`)).body.matches, []);
    const placeholder = await s.call('GET', `${S}?content=${q('<redacted by felis>')}`);
    assert.equal(placeholder.status, 200, placeholder.text);
    assert.deepEqual(placeholder.body.matches, [{ path: 'server.properties', line: 3, column: 15, text: 'rcon.password=<redacted by felis>' }]);
    assert.deepEqual([placeholder.body.path, placeholder.body.content, placeholder.body.truncated, placeholder.body.world_state], ['', '<redacted by felis>', false, 'stopped']);
    assert.ok(placeholder.body.scanned_files >= 5 && placeholder.body.scanned_bytes > 100, placeholder.text);
  });

  test('the withheld file and a copy of its content are never searched; binary files and links are skipped', async () => {
    for (const text of ['not-for-your-eyes', 'velocity']) {
      const r = await s.call('GET', `${S}?content=${q(text)}`);
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.body.matches, [], text);
    }
    const steve = await s.call('GET', `${S}?content=STEVE`);
    assert.deepEqual(where(steve.body.matches), ['logs/latest.log:2:12', 'logs/latest.log:3:12', 'logs/old.txt:1:1']);
    assert.deepEqual(
      steve.body.matches.find((h: Hit) => h.line === 2),
      { path: 'logs/latest.log', line: 2, column: 12, text: '[12:01:00] Steve joined the game' },
    );
    // Unicode text matches itself; q filters the names searched.
    assert.deepEqual(where((await s.call('GET', `${S}?content=${q('hello wörld')}`)).body.matches), ['logs/latest.log:3:19']);
    assert.deepEqual(where((await s.call('GET', `${S}?content=${q('hello WÖRLD')}`)).body.matches), []);
    const named = await s.call('GET', `${S}?path=logs&q=${q('*.txt')}&content=steve`);
    assert.deepEqual([named.body.q, where(named.body.matches)], ['*.txt', ['logs/old.txt:1:1']]);
    const limited = await s.call('GET', `${S}?content=steve&limit=1`);
    assert.deepEqual([limited.body.matches.length, limited.body.truncated], [1, true]);
  });

  test('a bad text is 400 bad_request in plain words, and no Job runs; hostile paths are refused', async () => {
    s.cluster.resetCounts();
    for (const [qs, msg] of [
      ['content=', /1 to 256 bytes/],
      [`content=${'x'.repeat(257)}`, /1 to 256 bytes/],
      ['content=a%0Ab', /line break/],
      ['content=ab&q=a', /2 characters/],
    ] as const) {
      const r = await s.call('GET', `${S}?${qs}`);
      assert.equal(r.status, 400, r.text);
      assert.equal(r.body.error.code, 'bad_request');
      assert.match(r.body.error.message, msg);
    }
    assert.equal(s.cluster.counts(FUNCTION_USER)['create jobs'] ?? 0, 0);
    for (const path of ['..', 'logs/../../etc', 'logs/escape', 'config/paper-global.yml', 'server.properties']) {
      const r = await s.call('GET', `${S}?path=${q(path)}&content=steve`);
      assert.equal(r.status, 400, `${path}: ${r.text}`);
      assert.equal(r.body.error.code, 'bad_path', path);
    }
    assert.equal((await s.call('GET', `${S}?path=nope&content=steve`)).status, 404);
  });

  test("a warm content search from the browse Pod equals the one-shot Job's", async () => {
    const url = `${S}?path=logs&content=steve`;
    const warm = await untilWarm(s, url, 'a content search answered by the browse Pod');
    const cold = await oneShotEditor(s).searchContent(SURVIVAL, 'logs', { text: 'steve' });
    assert.deepEqual(warm.body.matches, cold.matches);
    assert.deepEqual([warm.body.truncated, warm.body.scanned_files, warm.body.scanned_bytes], [cold.truncated, cold.scanned_files, cold.scanned_bytes]);
    assert.equal(cold.matches.length, 3);
  });
});
