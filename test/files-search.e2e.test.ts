/**
 * Search by name end to end: `level` finds `world/level.dat`, a glob finds every `.yml` (the
 * withheld file at size 0), nested folders are walked in byte order of path, a link to outside the
 * world is a match by its name but never descended, the answer from a warm browse Pod equals the
 * one-shot Job's, and a short query is refused before any Job.
 */

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { FUNCTION_USER, q, type Stack, startStack } from './support/stack.ts';
import { oneShotEditor, SURVIVAL, untilWarm } from './support/warm-cold.ts';

const byBytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));
type Match = { path: string; name: string; size: number; is_dir: boolean; mod_time: string };

describe('search by name', () => {
  let s: Stack;
  let outside: string;
  before(async () => {
    s = await startStack({ browse: {} });
    // Nested folders, names that sort differently by bytes than by locale, and a link out.
    for (let d = 0; d < 3; d++) {
      for (const sub of ['data', 'Data-old']) {
        mkdirSync(join(s.world, `plugins/P${d}/${sub}`), { recursive: true });
        writeFileSync(join(s.world, `plugins/P${d}/${sub}/config.yml`), `p${d}\n`);
        writeFileSync(join(s.world, `plugins/P${d}/${sub}/level-${d}.json`), '{}\n');
      }
    }
    writeFileSync(join(s.world, 'plugins/P0/config.yml.bak'), 'old\n');
    outside = mkdtempSync(join(tmpdir(), 'felis-outside-'));
    writeFileSync(join(outside, 'level.dat'), 'not the world\n');
    writeFileSync(join(outside, 'secret.yml'), 'not the world\n');
    symlinkSync(outside, join(s.world, 'plugins/escape'));
  });
  after(async () => {
    await s?.close();
    if (outside) rmSync(outside, { recursive: true, force: true });
  });

  test('level finds world/level.dat, at any depth, and never through the link out of the world', async () => {
    const r = await s.call('GET', `/api/v1/servers/survival/files/search?q=level`);
    assert.equal(r.status, 200, r.text);
    const paths = r.body.matches.map((m: Match) => m.path);
    assert.ok(paths.includes('world/level.dat'), paths.join(', '));
    const lvl = r.body.matches.find((m: Match) => m.path === 'world/level.dat');
    assert.deepEqual([lvl.name, lvl.size, lvl.is_dir], ['level.dat', statSync(join(s.world, 'world/level.dat')).size, false]);
    assert.deepEqual(paths, [...paths].sort(byBytes), 'byte order of path');
    assert.equal(paths.filter((p: string) => p.startsWith('plugins/P')).length, 6);
    assert.ok(!paths.some((p: string) => p.startsWith('plugins/escape/')), 'the link is not descended');
    assert.equal(r.body.q, 'level');
    assert.equal(r.body.path, '');
    assert.equal(r.body.truncated, false);
    assert.ok(r.body.scanned > 20, String(r.body.scanned));
  });

  test('a glob: *.yml finds every .yml below the path and nothing else; the withheld file at size 0', async () => {
    const r = await s.call('GET', `/api/v1/servers/survival/files/search?q=${q('*.yml')}`);
    assert.equal(r.status, 200, r.text);
    const paths: string[] = r.body.matches.map((m: Match) => m.path);
    assert.ok(
      paths.every((p) => p.endsWith('.yml')),
      paths.join(', '),
    );
    assert.ok(!paths.includes('plugins/P0/config.yml.bak'));
    assert.ok(!paths.some((p) => p.includes('secret.yml')), 'nothing from outside');
    assert.equal(paths.filter((p) => /^plugins\/P\d\/(data|Data-old)\/config\.yml$/.test(p)).length, 6);
    assert.equal(r.body.matches.find((m: Match) => m.path === 'config/paper-global.yml')?.size, 0, 'withheld, as a listing shows it');
    // Below a folder, limited: the first matches in byte order, and truncated.
    const sub = await s.call('GET', `/api/v1/servers/survival/files/search?path=plugins&q=${q('*.yml')}&limit=2`);
    assert.equal(sub.status, 200, sub.text);
    assert.deepEqual(
      sub.body.matches.map((m: Match) => m.path),
      ['plugins/P0/Data-old/config.yml', 'plugins/P0/data/config.yml'],
    );
    assert.equal(sub.body.truncated, true);
  });

  test('a query shorter than 2 characters or a limit past 1000 is 400 bad_request, and no Job runs', async () => {
    s.cluster.resetCounts();
    for (const qs of ['q=l', 'q=level&limit=1001']) {
      const r = await s.call('GET', `/api/v1/servers/survival/files/search?${qs}`);
      assert.equal(r.status, 400, r.text);
      assert.equal(r.body.error.code, 'bad_request');
    }
    assert.equal(s.cluster.counts(FUNCTION_USER)['create jobs'] ?? 0, 0);
    const missing = await s.call('GET', `/api/v1/servers/survival/files/search?path=nope&q=level`);
    assert.equal(missing.status, 404, missing.text);
    assert.equal(missing.body.error.code, 'not_found');
  });

  test('a hostile path is refused, never searched: out of the world by .., or through a link that leads out', async () => {
    for (const path of ['..', '../..', 'plugins/../../etc', 'plugins/escape', 'plugins/escape/sub']) {
      const r = await s.call('GET', `/api/v1/servers/survival/files/search?path=${q(path)}&q=${q('pass')}`);
      assert.equal(r.status, 400, `${path}: ${r.text}`);
      assert.equal(r.body.error.code, 'bad_path', path);
    }
  });

  test("a warm search from the browse Pod equals the one-shot Job's", async () => {
    const url = `/api/v1/servers/survival/files/search?path=plugins&q=${q('*.json')}&limit=5`;
    const warm = await untilWarm(s, url, 'a search answered by the browse Pod');
    const oneShot = oneShotEditor(s);
    const cold = await oneShot.search(SURVIVAL, 'plugins', { q: '*.json', limit: 5 });
    assert.deepEqual(warm.body.matches, cold.matches);
    assert.equal(warm.body.truncated, cold.truncated);
    assert.equal(warm.body.scanned, cold.scanned);
    assert.deepEqual(
      cold.matches.map((m) => m.path),
      ['plugins/P0/Data-old/level-0.json', 'plugins/P0/data/level-0.json', 'plugins/P1/Data-old/level-1.json', 'plugins/P1/data/level-1.json', 'plugins/P2/Data-old/level-2.json'],
    );
    assert.equal(cold.truncated, true);
  });
});
