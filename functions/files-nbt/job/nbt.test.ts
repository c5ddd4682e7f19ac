/**
 * The nbt op in the Job program, on a test world: a file read as its report (through the result
 * line), and every way to the withheld file, to server.properties or out of the world refused
 * without parsing, naming only the caller's path.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { makeWorld, sha256 } from '../../../job/testing/world.ts';
import { formatResultLine, RESULT_PREFIX } from '../../../lib/protocol/result.ts';
import { parseResultPayload } from '../../../lib/protocol/result-parse.ts';
import { fileOf, payloadOf, playerDoc } from '../fixtures.test-kit.ts';
import type { NbtReport } from '../op.ts';

test('a playerdata file is its report, through the result line: compression, digests, the typed root', async () => {
  const w = makeWorld();
  const payload = payloadOf(playerDoc());
  const file = fileOf(payload, 'zlib');
  fs.mkdirSync(w.p('world/playerdata'), { recursive: true });
  fs.writeFileSync(w.p('world/playerdata/p.dat'), file);
  // Through a link inside the world, as a read follows one.
  fs.symlinkSync('playerdata/p.dat', w.p('world/me.dat'));
  for (const p of ['world/playerdata/p.dat', 'world/me.dat']) {
    const r = await w.run({ op: 'nbt', path: p });
    const back = parseResultPayload(formatResultLine(r).slice(RESULT_PREFIX.length).trimEnd());
    const n = back.report as NbtReport;
    assert.deepEqual([n.path, n.compression, n.sha256, n.payload_sha256], [p, 'zlib', sha256(file), sha256(payload)]);
    assert.deepEqual(n.root.value.Pos, { type: 'list', value: { type: 'double', value: [12.5, 64, -1022.300000000001] } });
  }
});

test('the withheld file (by name, link or hard link), server.properties, a folder and links out are refused unparsed', async () => {
  const w = makeWorld();
  fs.symlinkSync('config/paper-global.yml', w.p('secret-link.dat'));
  fs.linkSync(w.p('config/paper-global.yml'), w.p('secret-hard.dat'));
  fs.symlinkSync(path.join(w.outside, 'secret.txt'), w.p('out.dat'));
  fs.writeFileSync(w.p('big.dat'), Buffer.alloc((8 << 20) + 1));
  for (const [p, code] of [
    ['config/paper-global.yml', 'bad_path'],
    ['secret-link.dat', 'bad_path'],
    ['secret-hard.dat', 'bad_path'],
    ['out.dat', 'bad_path'],
    ['../outside/secret.txt', 'bad_path'],
    ['config', 'bad_path'],
    ['none.dat', 'not_found'],
    ['server.properties', 'nbt_invalid'],
    ['config/paper.yml', 'nbt_invalid'],
    ['big.dat', 'too_large'],
  ] as const) {
    const r = await w.run({ op: 'nbt', path: p });
    assert.equal(r.code, code, `${p}: ${JSON.stringify(r)}`);
    assert.doesNotMatch(JSON.stringify(r), /XYZZY|hunter2|outside-secret/);
  }
});
