/**
 * Region files end to end, on the embedded cluster (`npm test`) and the real control plane
 * (`npm run test:cluster`): a region file the tests write read as its chunk table; a dry run says
 * what would go and changes nothing; the prune (a background op) removes it from region/,
 * entities/ and poi/, packs the files, and leaves the old ones in the undo trash; a name that is
 * no region file is 400 region_invalid; paths out of the world and the withheld file are refused;
 * while the server runs the table answers and the prune is refused.
 */

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { waitOp } from '../../test/support/ops.ts';
import { RUNNING, setServer } from '../../test/support/servers.ts';
import { q, type Stack, startStack } from '../../test/support/stack.ts';
import { pruneWorld, regionFile, writeRegion } from './region.test-kit.ts';

const S = '/api/v1/servers/survival';
const table = (p: string) => `${S}/files/region?path=${q(p)}`;
const PRUNE = `${S}/files/region/prune`;

describe('files/region', () => {
  let s: Stack;
  let outside: string;
  before(async () => {
    s = await startStack();
    outside = mkdtempSync(join(tmpdir(), 'felis-outside-'));
    writeRegion(join(outside, 'region'), 'r.0.0.mca', regionFile([{ index: 0, inhabited: 0 }]));
    mkdirSync(join(s.world, 'linked'), { recursive: true });
    symlinkSync(join(outside, 'region'), join(s.world, 'linked', 'region'));
    symlinkSync(join(outside, 'region', 'r.0.0.mca'), join(s.world, 'r.0.0.mca'));
  });
  after(async () => {
    await s?.close();
    if (outside) rmSync(outside, { recursive: true, force: true });
  });

  test('the table, a dry run that changes nothing, then the prune: region, entities and poi packed, the old files in the trash', async () => {
    pruneWorld(join(s.world, 'w1'));
    const t = await s.call('GET', table('w1/region/r.0.0.mca'));
    assert.equal(t.status, 200, t.text);
    assert.equal(t.body.world_state, 'stopped');
    assert.equal(t.body.chunks.length, 7);
    const huge = t.body.chunks.find((c: any) => c.x === 31 && c.z === 31);
    assert.equal(huge.inhabited_ticks, String(2n ** 60n));
    assert.ok(t.body.sectors_free > 0, 'the kit leaves gaps');

    const before = readFileSync(join(s.world, 'w1/region/r.0.0.mca'));
    const dry = await s.call('POST', PRUNE, { path: 'w1', inhabited_below_ticks: 1000, dry_run: true });
    assert.equal(dry.status, 200, dry.text);
    assert.deepEqual([dry.body.dry_run, dry.body.region, dry.body.scanned, dry.body.files_changed, dry.body.chunks_removed], [true, 'w1/region', 3, 2, 6]);
    assert.deepEqual(readFileSync(join(s.world, 'w1/region/r.0.0.mca')), before, 'the dry run changed nothing');

    const sizes = () =>
      ['region/r.0.0.mca', 'entities/r.0.0.mca', 'poi/r.0.0.mca', 'region/r.1.0.mca', 'entities/r.1.0.mca', 'region/c.20.15.mcc'].reduce((n, p) => {
        try {
          return n + statSync(join(s.world, 'w1', p)).size;
        } catch {
          return n;
        }
      }, 0);
    const sizeBefore = sizes();
    const r = await s.call('POST', PRUNE, { path: 'w1', inhabited_below_ticks: '1000' });
    assert.equal(r.status, 202, r.text);
    assert.equal(r.body.op.op, 'region-prune');
    const op = await waitOp(s, r.body.op.id, undefined, 120_000);
    assert.equal(op.state, 'succeeded', JSON.stringify(op));
    assert.deepEqual([op.files, op.bytes], [2, dry.body.bytes_freed]);
    assert.equal(sizeBefore - sizes(), dry.body.bytes_freed, 'what the dry run said comes back');

    const after = await s.call('GET', table('w1/region/r.0.0.mca'));
    assert.deepEqual(
      after.body.chunks.map((c: any) => [c.x, c.z]),
      [
        [1, 0],
        [8, 1],
        [31, 31],
      ],
    );
    assert.equal(after.body.sectors_free, 0, 'packed');
    const ent = await s.call('GET', table('w1/entities/r.0.0.mca'));
    assert.equal(ent.body.chunks.length, 3);
    assert.equal((await s.call('GET', table('w1/region/r.1.0.mca'))).status, 404, 'a file whose chunks all went is removed');

    const trash = await s.call('GET', `${S}/files/trash`);
    assert.equal(trash.status, 200, trash.text);
    const rec = trash.body.items.find((i: any) => i.op === 'region-prune');
    assert.ok(rec?.paths.includes('w1/region/r.0.0.mca'), JSON.stringify(trash.body));
  });

  test('refusals: not a region name 400 region_invalid, a short file region_invalid, paths out and links out refused, no region folder 404', async () => {
    mkdirSync(join(s.world, 'w2', 'region'), { recursive: true });
    writeFileSync(join(s.world, 'w2', 'region', 'r.0.0.mca'), 'short');
    for (const [method, path, body, status, code] of [
      ['GET', table('w2/region/r.0.0.mcr'), undefined, 400, 'region_invalid'],
      ['GET', table('w2/region/r.0.0.mca'), undefined, 400, 'region_invalid'],
      ['GET', table('../outside/r.0.0.mca'), undefined, 400, 'bad_path'],
      ['GET', table('r.0.0.mca'), undefined, 400, 'bad_path'],
      ['GET', table('config/paper-global.yml'), undefined, 400, 'region_invalid'],
      ['POST', PRUNE, { path: '../x', inhabited_below_ticks: 1 }, 400, 'bad_path'],
      ['POST', PRUNE, { path: 'w2', inhabited_below_ticks: -1 }, 400, 'bad_request'],
      ['POST', PRUNE, { path: 'linked', inhabited_below_ticks: 1, dry_run: true }, 400, 'bad_path'],
      ['POST', PRUNE, { path: 'nowhere', inhabited_below_ticks: 1, dry_run: true }, 404, 'not_found'],
    ] as const) {
      const r = await s.call(method, path, body);
      assert.equal(r.status, status, `${path} ${JSON.stringify(body)}: ${r.text}`);
      assert.equal(r.body.error.code, code, r.text);
      assert.doesNotMatch(r.text, /XYZZY|outside-secret/);
    }
    // The short file was skipped by a dry run of its world: left alone, said why.
    const dry = await s.call('POST', PRUNE, { path: 'w2', inhabited_below_ticks: 1, dry_run: true });
    assert.equal(dry.status, 200, dry.text);
    assert.match(dry.body.skipped[0].reason, /no region header/);
  });

  // Last: the server stays running.
  test('while the server runs: the table answers beside the game (world_state running); the prune and its dry run are 409 not_stopped', async () => {
    pruneWorld(join(s.world, 'w3'));
    await setServer(s.cluster, 'survival', RUNNING);
    const custom = s.cluster.kubeConfig(s.cluster.adminToken).makeApiClient(CustomObjectsApi);
    await custom.patchNamespacedCustomObjectStatus(
      { group: 'felis.lolicon.best', version: 'v1alpha1', namespace: 'minecraft', plural: 'minecraftservers', name: 'survival', body: { status: { nodeName: 'local' } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const t = await s.call('GET', table('w3/region/r.0.0.mca'));
    assert.equal(t.status, 200, t.text);
    assert.equal(t.body.world_state, 'running');
    const before = readFileSync(join(s.world, 'w3/region/r.0.0.mca'));
    for (const dry_run of [true, false]) {
      const r = await s.call('POST', PRUNE, { path: 'w3', inhabited_below_ticks: 1000, dry_run });
      assert.equal(r.status, 409, r.text);
      assert.equal(r.body.error.code, 'not_stopped');
    }
    assert.deepEqual(readFileSync(join(s.world, 'w3/region/r.0.0.mca')), before);
  });
});
