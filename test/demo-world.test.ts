/**
 * The demo world `npm start` seeds: its level.dat is a gzip NBT file our own decoder reads back
 * (the Data compound a panel shows), its logs are a plain latest.log and a gzip of an older day,
 * and an existing world is never written.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { compressionOf, decodeNbt, payloadOf } from '../functions/files-nbt/job/nbt-decode.ts';
import { seedDemoWorld } from '../scripts/demo-world.ts';

describe('the demo world', () => {
  const data = mkdtempSync(join(tmpdir(), 'felis-demo-'));
  after(() => rmSync(data, { recursive: true, force: true }));
  const dir = seedDemoWorld(data);

  test('world/level.dat is a gzip NBT level.dat our decoder reads', () => {
    const file = readFileSync(join(dir, 'world/level.dat'));
    assert.equal(compressionOf(file), 'gzip');
    const root = decodeNbt(payloadOf(file, 'gzip'));
    assert.equal(root.name, '');
    const d = (root.value.Data?.value ?? {}) as Record<string, { type: string; value: unknown }>;
    assert.deepEqual(d.LevelName, { type: 'string', value: 'Survival' });
    assert.deepEqual(d.Time, { type: 'long', value: '1234567' });
    assert.deepEqual(d.DataVersion, { type: 'int', value: 3953 });
    assert.deepEqual([d.SpawnX?.value, d.SpawnY?.value, d.SpawnZ?.value], [0, 64, 0]);
    assert.deepEqual(d.GameType, { type: 'int', value: 0 });
    assert.deepEqual(d.ServerBrands, { type: 'list', value: { type: 'string', value: ['Paper'] } });
  });

  test('logs/ holds latest.log and a gzip log of an earlier day', () => {
    assert.deepEqual(readdirSync(join(dir, 'logs')).sort(), ['2026-12-01-1.log.gz', 'latest.log']);
    assert.match(readFileSync(join(dir, 'logs/latest.log'), 'utf8'), /Done \(.*\)! For help/);
    assert.match(gunzipSync(readFileSync(join(dir, 'logs/2026-12-01-1.log.gz'))).toString('utf8'), /Stopping server/);
  });

  test('a world already there is left as it is', () => {
    writeFileSync(join(dir, 'world/level.dat'), 'mine');
    assert.equal(seedDemoWorld(data), dir);
    assert.equal(readFileSync(join(dir, 'world/level.dat'), 'utf8'), 'mine');
  });
});
