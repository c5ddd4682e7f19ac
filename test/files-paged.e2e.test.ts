/**
 * Paged listings end to end: a folder of 3000 entries paged through 500 at a time gives every name
 * once in byte order, `q` filters in any case, the unpaged listing of a folder over 2000 entries is
 * the first page of 2000 with `next`, and a warm page from the browse Pod equals the one-shot Job's.
 */

import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { q, type Stack, startStack } from './support/stack.ts';
import { oneShotEditor, SURVIVAL, untilWarm } from './support/warm-cold.ts';

const byBytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));
const TOTAL = 3000;

describe('paged listings', () => {
  let s: Stack;
  let all: string[];
  before(async () => {
    s = await startStack({ browse: {} });
    const big = join(s.world, 'big');
    mkdirSync(big);
    // Mixed case, digits and non-ASCII, so byte order differs from both directory and locale order.
    for (let i = 0; i < TOTAL - 20; i++) writeFileSync(join(big, `${['f', 'F', 'é', '_'][i % 4]}-${(i * 7919) % 100_000}`), '');
    for (let i = 0; i < 10; i++) mkdirSync(join(big, `Level-${i}`));
    for (let i = 0; i < 9; i++) writeFileSync(join(big, `levelÄ${i}.dat`), `${i}`);
    symlinkSync('/etc', join(big, 'to-etc'));
    all = readdirSync(big).sort(byBytes);
    assert.equal(all.length, TOTAL, 'the folder as made');
  });
  after(async () => {
    await s?.close();
  });

  test('without limit, after or q a folder of more than 2000 answers the first 2000 by name, truncated, with next; the paged form goes on from it', async () => {
    const r = await s.call('GET', `/api/v1/servers/survival/files?path=big`);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.entries.length, 2000);
    assert.equal(r.body.truncated, true);
    const names = r.body.entries.map((e: { name: string }) => e.name);
    assert.deepEqual(names, all.slice(0, 2000));
    assert.equal(r.body.next, all[1999]);
    for (const e of r.body.entries) {
      assert.match(e.mode, /^[0-7]{3}$/);
      assert.equal(typeof e.is_symlink, 'boolean');
    }
    const rest = await s.call('GET', `/api/v1/servers/survival/files?path=big&limit=5000&after=${q(r.body.next)}`);
    assert.equal(rest.status, 200, rest.text);
    assert.equal(rest.body.truncated, false);
    assert.deepEqual([...names, ...rest.body.entries.map((e: { name: string }) => e.name)], all);
    // A folder that fits is the original listing, whole, without next.
    const small = await s.call('GET', `/api/v1/servers/survival/files`);
    assert.equal(small.body.truncated, false);
    assert.equal('next' in small.body, false);
  });

  test('paging through 500 at a time gives every name exactly once, in byte order; links listed as themselves', async () => {
    const got: string[] = [];
    let after = '';
    let pages = 0;
    for (;;) {
      const r = await s.call('GET', `/api/v1/servers/survival/files?path=big&limit=500${after ? `&after=${q(after)}` : ''}`);
      assert.equal(r.status, 200, r.text);
      pages++;
      got.push(...r.body.entries.map((e: { name: string }) => e.name));
      const link = r.body.entries.find((e: { name: string }) => e.name === 'to-etc');
      if (link) assert.deepEqual([link.is_symlink, link.is_dir, link.mode], [true, false, '777']);
      if (!r.body.truncated) {
        assert.equal('next' in r.body, false);
        break;
      }
      assert.equal(r.body.entries.length, 500);
      assert.equal(r.body.next, r.body.entries.at(-1).name);
      after = r.body.next;
      assert.ok(pages < 10, 'paging ends');
    }
    assert.equal(pages, TOTAL / 500);
    assert.deepEqual(got, all);
  });

  test('q filters names in any case, non-ASCII included, and pages like any listing', async () => {
    const r = await s.call('GET', `/api/v1/servers/survival/files?path=big&q=${q('LEVELä')}`);
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(
      r.body.entries.map((e: { name: string }) => e.name),
      all.filter((n) => n.startsWith('levelÄ')),
    );
    const lv = await s.call('GET', `/api/v1/servers/survival/files?path=big&q=level&limit=15`);
    assert.deepEqual(
      lv.body.entries.map((e: { name: string }) => e.name),
      all.filter((n) => n.toLowerCase().includes('level')).slice(0, 15),
    );
    assert.equal(lv.body.truncated, true);
    const dirs = lv.body.entries.filter((e: { is_dir: boolean }) => e.is_dir).length;
    assert.equal(dirs, 10, 'the Level-<n> folders');
    const bad = await s.call('GET', `/api/v1/servers/survival/files?path=big&limit=5001`);
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.code, 'bad_request');
  });

  test('a hostile path is refused, never paged: out of the world by .., or through a link that leads out', async () => {
    for (const path of ['..', 'big/../../etc', 'big/to-etc']) {
      const r = await s.call('GET', `/api/v1/servers/survival/files?path=${q(path)}&limit=10`);
      assert.equal(r.status, 400, `${path}: ${r.text}`);
      assert.equal(r.body.error.code, 'bad_path', path);
    }
  });

  test("a warm page from the browse Pod equals the one-shot Job's page", async () => {
    const url = `/api/v1/servers/survival/files?path=big&limit=700&after=${q(all[1234]!)}&q=-`;
    // The first requests start the session; wait until one is answered without a Job.
    const warm = await untilWarm(s, url, 'a page answered by the browse Pod');
    const oneShot = oneShotEditor(s);
    const cold = await oneShot.list(SURVIVAL, 'big', undefined, { limit: 700, after: all[1234]!, q: '-' });
    assert.deepEqual(warm.body.entries, cold.entries);
    assert.equal(warm.body.truncated, cold.truncated);
    assert.deepEqual(
      cold.entries.map((e) => e.name),
      all.filter((n) => byBytes(n, all[1234]!) > 0 && n.includes('-')).slice(0, 700),
    );
  });
});
