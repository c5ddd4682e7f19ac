/**
 * NBT as JSON end to end, on the embedded cluster (`npm test`) and the real control plane
 * (`npm run test:cluster`): a level.dat-shaped file read, one field changed, written back and read
 * again; an unchanged write leaves the very bytes (gzip, zlib and bare); a stale `expect_sha256`
 * is 409; a bad tag is 400 naming it before any Job; what is no NBT is 400 nbt_invalid; `../`, the
 * withheld file and a link out of the world are refused; the read's Job is labelled a read.
 */

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { admin } from '../../test/support/servers.ts';
import { q, type Stack, startStack } from '../../test/support/stack.ts';
import { fileOf, levelDoc, payloadOf, playerDoc } from './fixtures.test-kit.ts';

const S = '/api/v1/servers/survival';
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const at = (p: string) => `${S}/files/nbt?path=${q(p)}`;

describe('files/nbt', () => {
  let s: Stack;
  let outside: string;
  before(async () => {
    s = await startStack();
    mkdirSync(join(s.world, 'world', 'playerdata'), { recursive: true });
    writeFileSync(join(s.world, 'world', 'level.dat'), fileOf(payloadOf(levelDoc()), 'gzip'));
    writeFileSync(join(s.world, 'world', 'playerdata', 'p.dat'), fileOf(payloadOf(playerDoc()), 'zlib'));
    writeFileSync(join(s.world, 'world', 'bare.nbt'), fileOf(payloadOf(playerDoc()), 'none'));
    writeFileSync(join(s.world, 'world', 'bomb.dat'), fileOf(Buffer.alloc(48 << 20), 'gzip'));
    outside = mkdtempSync(join(tmpdir(), 'felis-outside-'));
    writeFileSync(join(outside, 'level.dat'), fileOf(payloadOf(levelDoc()), 'gzip'));
    symlinkSync(join(outside, 'level.dat'), join(s.world, 'world', 'escape.dat'));
  });
  after(async () => {
    await s?.close();
    if (outside) rmSync(outside, { recursive: true, force: true });
  });

  test('level.dat read as JSON, one field changed, written back, read again; the old file in the trash', async () => {
    const r = await s.call('GET', at('world/level.dat'));
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.compression, 'gzip');
    assert.equal(r.body.sha256, sha(readFileSync(join(s.world, 'world', 'level.dat'))));
    assert.equal(r.body.world_state, 'stopped');
    const data = r.body.root.value.Data.value;
    assert.deepEqual(data.Time, { type: 'long', value: '123456789012' });
    data.LevelName.value = 'Renamed by the API';
    data.Time.value = '-9223372036854775808';
    const w = await s.call('PUT', at('world/level.dat'), { root: r.body.root, expect_sha256: r.body.sha256 });
    assert.equal(w.status, 200, w.text);
    assert.equal(w.body.status, 'written');
    const disk = readFileSync(join(s.world, 'world', 'level.dat'));
    assert.equal(w.body.sha256, sha(disk));
    assert.ok(gunzipSync(disk).includes(Buffer.from('Renamed by the API')), 'still gzip, with the new name');
    const again = await s.call('GET', at('world/level.dat'));
    assert.equal(again.status, 200, again.text);
    assert.equal(again.body.root.value.Data.value.LevelName.value, 'Renamed by the API');
    assert.equal(again.body.root.value.Data.value.Time.value, '-9223372036854775808');
    const trash = await s.call('GET', `${S}/files/trash`);
    assert.ok(
      trash.body.items.some((i: { paths: string[] }) => i.paths.includes('world/level.dat')),
      trash.text,
    );
    // The same document once more: nothing changes.
    const same = await s.call('PUT', at('world/level.dat'), { root: again.body.root, expect_sha256: again.body.sha256 });
    assert.deepEqual([same.status, same.body.status, same.body.sha256], [200, 'unchanged', again.body.sha256]);
  });

  test('an unchanged write keeps the very bytes, whatever the compression; asked to, it changes the compression', async () => {
    for (const p of ['world/playerdata/p.dat', 'world/bare.nbt']) {
      const before = readFileSync(join(s.world, p));
      const r = await s.call('GET', at(p));
      assert.equal(r.status, 200, r.text);
      const w = await s.call('PUT', at(p), { root: r.body.root, expect_sha256: r.body.sha256 });
      assert.equal(w.status, 200, w.text);
      assert.deepEqual([w.body.status, w.body.sha256], ['unchanged', sha(before)]);
      assert.ok(readFileSync(join(s.world, p)).equals(before), `${p} is byte-identical`);
    }
    const r = await s.call('GET', at('world/bare.nbt'));
    const w = await s.call('PUT', at('world/bare.nbt'), { root: r.body.root, compression: 'gzip', expect_sha256: r.body.sha256 });
    assert.deepEqual([w.status, w.body.status], [200, 'written'], w.text);
    assert.ok(gunzipSync(readFileSync(join(s.world, 'world', 'bare.nbt'))).equals(payloadOf(playerDoc())), 'the same NBT, now gzip');
  });

  test('a stale expect_sha256 is 409 file_changed; a bad tag is 400 nbt_invalid naming it, before any Job', async () => {
    const r = await s.call('GET', at('world/playerdata/p.dat'));
    const stale = await s.call('PUT', at('world/playerdata/p.dat'), { root: r.body.root, expect_sha256: 'a'.repeat(64) });
    assert.equal(stale.status, 409, stale.text);
    assert.equal(stale.body.error.code, 'file_changed');
    r.body.root.value.Inventory.value.value[1].count.value = 'many';
    const jobs = async () => (await admin(s.cluster).batch.listNamespacedJob({ namespace: 'minecraft', labelSelector: 'felis.lolicon.best/server=survival' })).items.length;
    const n = await jobs();
    const bad = await s.call('PUT', at('world/playerdata/p.dat'), { root: r.body.root, expect_sha256: r.body.sha256 });
    assert.equal(bad.status, 400, bad.text);
    assert.equal(bad.body.error.code, 'nbt_invalid');
    assert.match(bad.body.error.message, /root\.value\.Inventory\.value\.value\[1\]\.count\.value must be a whole number/);
    assert.equal(await jobs(), n, 'no Job was made');
  });

  test('what is no NBT is 400 nbt_invalid; a bad path, the withheld file and a link out are refused; the Job is a read', async () => {
    const bomb = await s.call('GET', at('world/bomb.dat'));
    assert.equal(bomb.status, 400, bomb.text);
    assert.equal(bomb.body.error.code, 'nbt_invalid');
    assert.match(bomb.body.error.message, /^world\/bomb\.dat is not an NBT file this route reads: it decompresses to more than 33554432 bytes/);
    const props = await s.call('GET', at('server.properties'));
    assert.deepEqual([props.status, props.body.error.code], [400, 'nbt_invalid'], props.text);
    assert.doesNotMatch(props.text, /rcon|secret/i);
    for (const [p, status, code] of [
      ['../outside.dat', 400, 'bad_path'],
      ['config/paper-global.yml', 400, 'bad_path'],
      ['world/escape.dat', 400, 'bad_path'],
      ['world/none.dat', 404, 'not_found'],
    ] as const) {
      const r = await s.call('GET', at(p));
      assert.deepEqual([r.status, r.body.error?.code], [status, code], `${p}: ${r.text}`);
      const w = await s.call('PUT', at(p), { root: { type: 'compound', name: '', value: {} }, expect_sha256: 'a'.repeat(64) });
      assert.deepEqual([w.status, w.body.error?.code], [status, code], `PUT ${p}: ${w.text}`);
    }
    const jobs = (await admin(s.cluster).batch.listNamespacedJob({ namespace: 'minecraft', labelSelector: 'felis.lolicon.best/server=survival' })).items;
    const reads = jobs.filter((j) => j.spec?.template.spec?.containers[0]?.args?.includes('nbt'));
    assert.ok(reads.length > 0);
    for (const j of reads) {
      assert.equal(j.metadata?.labels?.['felis.lolicon.best/files-mode'], 'read');
      assert.equal(j.metadata?.labels?.['felis.lolicon.best/files-read-op'], 'nbt');
    }
  });
});
